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

namespace gpumeter::bill {
namespace {

// libcsv grows its field buffer through this: refusing past the cap turns a runaway field (a
// quote never closed in a gigabyte file) into CSV_ENOMEM, reported as too long, not into memory.
void* CappedRealloc(void* p, size_t size) {
  return size > kMaxCsvFieldBytes + 1024 ? nullptr : std::realloc(p, size);
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

// What libcsv's callbacks fill, and the first error any of them met.
struct Reader {
  const std::string& path;
  const CsvRecordFn& on_record;
  std::vector<std::string> fields;
  int64_t line = 1;         // of the next byte fed
  int64_t record_line = 1;  // where the record being parsed started
  bool open = false;        // a record has begun and not ended
  bool too_many = false;
  std::optional<Error> error;

  // libcsv is C: nothing may unwind through it. An exception becomes the read's error.
  static void OnField(void* data, size_t len, void* ctx) {
    auto* r = static_cast<Reader*>(ctx);
    if (r->error || r->too_many) return;
    if (r->fields.size() >= kMaxCsvFields) {
      r->too_many = true;
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
    if (!r->error && r->too_many)
      r->error = Error{ErrorCode::kInvalidInput,
                       r->path + ":" + std::to_string(r->record_line) + ": more than " +
                           std::to_string(kMaxCsvFields) + " fields in one record"};
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
    r->too_many = false;
    r->open = false;
  }
};

Error ParseError(const Reader& r, int code) {
  const std::string where = r.path + ":" + std::to_string(r.record_line) + ": ";
  if (code == CSV_ENOMEM || code == CSV_ETOOBIG)
    return Error{ErrorCode::kInvalidInput, where + "a field longer than " +
                                               std::to_string(kMaxCsvFieldBytes) +
                                               " bytes (a quote never closed?)"};
  return Error{ErrorCode::kInvalidInput,
               where +
                   "malformed CSV: a quote inside an unquoted field, or text after a "
                   "closing quote"};
}

}  // namespace

Expected<void> ReadCsvRecords(const std::string& path, const CsvRecordFn& on_record) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return MakeError(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kUnavailable,
                     path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return MakeError(ErrorCode::kInvalidInput, path + ": not a regular file (refused)");
  std::unique_ptr<gzFile_s, GzCloser> gz(gzopen(path.c_str(), "rb"));
  if (!gz)
    return MakeError(ErrorCode::kUnavailable, path + ": cannot open: " + std::strerror(errno));
  gzbuffer(gz.get(), 1 << 18);
  Parser parser;
  if (!parser.ok) return MakeError(ErrorCode::kInternal, path + ": csv_init failed");
  csv_set_realloc_func(&parser.p, CappedRealloc);
  Reader r{path, on_record, {}, 1, 1, false, false, std::nullopt};
  std::string buf(1 << 18, '\0');
  bool first = true;
  for (;;) {
    const int n = gzread(gz.get(), buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int code = 0;
      const char* msg = gzerror(gz.get(), &code);
      return MakeError(ErrorCode::kInvalidInput,
                       path + ":" + std::to_string(r.line) + ": " + (msg ? msg : "read error"));
    }
    if (n == 0) break;
    std::string_view chunk(buf.data(), static_cast<size_t>(n));
    if (first && chunk.starts_with("\xEF\xBB\xBF")) chunk.remove_prefix(3);
    first = false;
    // Fed a line at a time, so that a record's callback knows the line it ends on.
    while (!chunk.empty()) {
      const size_t nl = chunk.find('\n');
      const size_t len = nl == std::string_view::npos ? chunk.size() : nl + 1;
      // A record begins on the first line that is not blank: libcsv skips lines of nothing but
      // spaces, tabs and line ends (a piece of one at a chunk's end included).
      if (!r.open && chunk.substr(0, len).find_first_not_of(" \t\r\n") != std::string_view::npos) {
        r.open = true;
        r.record_line = r.line;
      }
      if (csv_parse(&parser.p, chunk.data(), len, Reader::OnField, Reader::OnRecord, &r) != len)
        return tl::unexpected(r.error ? *r.error : ParseError(r, csv_error(&parser.p)));
      if (r.error) return tl::unexpected(*r.error);
      if (nl != std::string_view::npos) ++r.line;
      chunk.remove_prefix(len);
    }
  }
  // gzread returns 0 at the end and at a cut-short stream alike: gzerror tells them apart.
  int code = Z_OK;
  const char* msg = gzerror(gz.get(), &code);
  if (code != Z_OK)
    return MakeError(ErrorCode::kInvalidInput, path + ":" + std::to_string(r.line) + ": " +
                                                   (msg ? msg : "compressed stream broken"));
  if (csv_fini(&parser.p, Reader::OnField, Reader::OnRecord, &r) != 0)
    return tl::unexpected(
        r.error ? *r.error
                : Error{ErrorCode::kInvalidInput,
                        path + ":" + std::to_string(r.record_line) +
                            ": the file ends inside a quoted field begun on this line"});
  if (r.error) return tl::unexpected(*r.error);
  return {};
}

}  // namespace gpumeter::bill
