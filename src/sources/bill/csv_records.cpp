#include "sources/bill/csv_records.h"

#include <csv.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string_view>

#include "common/text_cell.h"

namespace gpumeter::bill {
namespace {

// libcsv grows its field buffer through this: refusing past the cap turns a runaway field (a
// quote never closed in a gigabyte file) into CSV_ENOMEM, reported as too long, not into memory.
void* CappedRealloc(void* p, size_t size) {
  return size > kMaxCsvRecordBytes + 1024 ? nullptr : std::realloc(p, size);
}

struct Parser {
  csv_parser p{};
  bool ok = false;
  Parser() { ok = csv_init(&p, CSV_STRICT | CSV_STRICT_FINI) == 0; }
  ~Parser() {
    if (ok) csv_free(&p);
  }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;
};

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

std::string TooLong() {
  return "a record longer than " + std::to_string(kMaxCsvRecordBytes) +
         " bytes (8 MiB; a quote never closed?)";
}

// What libcsv's callbacks fill, and the first error any of them met.
struct Reader {
  const std::string& path;  // as messages show it
  const CsvRecordFn& on_record;
  std::vector<std::string> fields;
  size_t record_bytes = 0;  // of the record being parsed, its separators counted
  int64_t line = 1;         // of the next byte fed
  int64_t record_line = 1;  // where the record being parsed started
  bool open = false;        // a record has begun and not ended
  bool after_cr = false;    // the last byte fed was a CR that ended a line
  std::optional<Error> error;

  Error Bad(const std::string& what) const {
    return Error{ErrorCode::kInvalidInput, path + ":" + std::to_string(record_line) + ": " + what};
  }
  // libcsv is C: nothing may unwind through it. An exception becomes the read's error. The read
  // stops at the first field past a cap (the caller returns once libcsv hands the piece back),
  // not at the record's end, which a hostile file may never reach.
  static void OnField(void* data, size_t len, void* ctx) {
    auto* r = static_cast<Reader*>(ctx);
    if (r->error) return;
    r->record_bytes += len + 1;  // an empty field costs too
    if (r->fields.size() >= kMaxCsvFields) {
      r->error = r->Bad("more than " + std::to_string(kMaxCsvFields) + " fields in one record");
      return;
    }
    if (r->record_bytes > kMaxCsvRecordBytes) {
      r->error = r->Bad(TooLong());
      return;
    }
    try {
      r->fields.emplace_back(static_cast<const char*>(data), len);
    } catch (const std::exception& e) {
      r->error = Error{ErrorCode::kInternal, r->path + ": " + e.what()};
    }
  }
  static void OnRecord(int, void* ctx) {
    auto* r = static_cast<Reader*>(ctx);
    if (!r->error) {
      try {
        auto done = r->on_record(r->record_line, r->fields);
        if (!done) r->error = done.error();
      } catch (const std::exception& e) {
        r->error = Error{ErrorCode::kInternal,
                         r->path + ":" + std::to_string(r->record_line) + ": " + e.what()};
      }
    }
    r->fields.clear();
    r->record_bytes = 0;
    r->open = false;
  }
};

Error ParseError(const Reader& r, int code) {
  if (code == CSV_ENOMEM || code == CSV_ETOOBIG) return r.Bad(TooLong());
  return r.Bad("malformed CSV: a quote inside an unquoted field, or text after a closing quote");
}

// Feeds a chunk a line at a time, so that a record's callback knows the line it starts on. LF,
// CRLF and a lone CR each end one line (libcsv ends a record at each: a file of CR line ends, as
// old Mac tools write, would otherwise be all line 1).
Expected<void> Feed(csv_parser& p, Reader& r, std::string_view chunk) {
  while (!chunk.empty()) {
    size_t len = chunk.size();
    bool line_end = false;
    if (r.after_cr && chunk.front() == '\n') {
      len = 1;  // the LF of a CRLF that two reads split: its CR ended the line
    } else if (const size_t eol = chunk.find_first_of("\r\n"); eol != std::string_view::npos) {
      line_end = true;
      const bool crlf = chunk[eol] == '\r' && eol + 1 < chunk.size() && chunk[eol + 1] == '\n';
      len = eol + (crlf ? size_t{2} : size_t{1});
    }
    const std::string_view piece = chunk.substr(0, len);
    // A record begins on the first line that is not blank: libcsv skips lines of nothing but
    // spaces, tabs and line ends (a piece of one at a chunk's end included).
    if (!r.open && piece.find_first_not_of(" \t\r\n") != std::string_view::npos) {
      r.open = true;
      r.record_line = r.line;
    }
    if (csv_parse(&p, piece.data(), len, Reader::OnField, Reader::OnRecord, &r) != len)
      return tl::unexpected(r.error ? *r.error : ParseError(r, csv_error(&p)));
    if (r.error) return tl::unexpected(*r.error);
    r.after_cr = line_end && piece.back() == '\r';
    if (line_end) ++r.line;
    chunk.remove_prefix(len);
  }
  return {};
}

}  // namespace

Expected<void> ReadCsvRecords(const std::string& path, const CsvRecordFn& on_record) {
  // The path is the caller's, but it may name a file someone else called something hostile.
  const std::string shown = TerminalCell(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return MakeError(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kUnavailable,
                     shown + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return MakeError(ErrorCode::kInvalidInput, shown + ": not a regular file (refused)");
  std::unique_ptr<gzFile_s, GzCloser> gz(gzopen(path.c_str(), "rb"));
  if (!gz)
    return MakeError(ErrorCode::kUnavailable, shown + ": cannot open: " + std::strerror(errno));
  gzbuffer(gz.get(), 1 << 18);
  Parser parser;
  if (!parser.ok) return MakeError(ErrorCode::kInternal, shown + ": csv_init failed");
  csv_set_realloc_func(&parser.p, CappedRealloc);
  Reader r{shown, on_record, {}, 0, 1, 1, false, false, std::nullopt};
  std::string buf(1 << 18, '\0');
  bool first = true;
  for (;;) {
    const int n = gzread(gz.get(), buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int code = 0;
      const char* msg = gzerror(gz.get(), &code);
      return MakeError(ErrorCode::kInvalidInput,
                       shown + ":" + std::to_string(r.line) + ": " + (msg ? msg : "read error"));
    }
    if (n == 0) break;
    std::string_view chunk(buf.data(), static_cast<size_t>(n));
    if (first && chunk.starts_with("\xEF\xBB\xBF")) chunk.remove_prefix(3);
    first = false;
    if (auto fed = Feed(parser.p, r, chunk); !fed) return fed;
  }
  // gzread returns 0 at the end and at a cut-short stream alike: gzerror tells them apart.
  int code = Z_OK;
  const char* msg = gzerror(gz.get(), &code);
  if (code != Z_OK)
    return MakeError(ErrorCode::kInvalidInput, shown + ":" + std::to_string(r.line) + ": " +
                                                   (msg ? msg : "compressed stream broken"));
  if (csv_fini(&parser.p, Reader::OnField, Reader::OnRecord, &r) != 0)
    return tl::unexpected(
        r.error ? *r.error : r.Bad("the file ends inside a quoted field begun on this line"));
  if (r.error) return tl::unexpected(*r.error);
  return {};
}

}  // namespace gpumeter::bill
