// SPDX-License-Identifier: Apache-2.0
// Report writers: a readable table (default), CSV (one row per figure) and JSON (one schema
// for every workflow: schema/results.schema.json). Units are explicit in all three.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "output_file.hpp"
#include "result.hpp"

namespace xfer::tool {

// The units legend every report carries.
extern const char *const kUnitsLegend;

// How the table shows bandwidth: compact (one row per size, medians, columns per direction
// with the raw call and the ratio beside xfer's) or long (one row per figure: --long).
enum class TableStyle { compact, long_form };

// What the CSV carries before its header row: nothing (the header row is the first line, so
// csv.DictReader and pandas.read_csv read it without options), or the run's metadata as '#'
// comment lines (--csv-metadata; pandas: comment='#'). The JSON report always has the metadata.
enum class CsvMetadata { none, comments };

void write_table(std::ostream &out, const Report &report, TableStyle style = TableStyle::compact);
void write_csv(std::ostream &out, const Report &report, CsvMetadata metadata = CsvMetadata::none);
// with_samples: every figure carries "values", its raw samples (--samples).
nlohmann::json report_to_json(const Report &report, bool with_samples = false);
// A result's "device" object (bench's too).
nlohmann::json device_to_json(const DeviceSummary &device);

// The pieces of the table and CSV, for writing them as results arrive (ReportStream).
void write_table_header(std::ostream &out, const Report &report);
void write_table_result(std::ostream &out, const WorkflowResult &r, TableStyle style);
// The peer workflow's GB/s as nvbandwidth prints them: a matrix with one row per source device
// and one column per destination device ('-' on the diagonal), xfer's medians and, where it was
// measured, the raw call's (report_peer.cpp). Nothing for a result without pairs.
void write_peer_matrices(std::ostream &out, const WorkflowResult &r);
void write_csv_header(std::ostream &out, const Report &report, CsvMetadata metadata = CsvMetadata::none);
void write_csv_result(std::ostream &out, const Report &report, const WorkflowResult &r);

// What an MPI survey (report.survey, cluster/survey.hpp) adds to the formats
// (report_survey.cpp): the table of ranks (table header), the summary (table end), both as
// '#' lines (CSV with CsvMetadata::comments), and the "survey" object (JSON). Each needs
// report.survey set.
void write_survey_ranks_table(std::ostream &out, const Report &report);
void write_survey_summary_table(std::ostream &out, const Survey &survey);
void write_survey_csv_comments(std::ostream &out, const Report &report);
nlohmann::json survey_to_json(const Report &report);

// Results that failed a check: verification failed or the workflow stopped on an error (and,
// in a survey, ranks that stopped on an error).
int failed_checks(const Report &report);
// "PASS" or "FAIL (n checks failed)", as bandwidthTest ends.
std::string verdict_line(const Report &report);

// A report written as it is measured: the output is opened at construction (before anything
// is measured; a path that cannot be opened is a std::runtime_error with the OS reason), the
// table and CSV get each workflow's block as soon as it is added (flushed, so a pipe or a batch
// log shows it), JSON is written whole at finish(). The table ends with verdict_line().
// A file (-o) is an OutputFile: written to a temporary file beside it and put in its place by
// commit(), so until then the earlier file at that path stays as it was.
class ReportStream {
  public:
    ReportStream(const std::string &format, const std::string &output, TableStyle style, bool with_samples,
                 CsvMetadata csv_metadata = CsvMetadata::none);
    ReportStream(const ReportStream &) = delete;
    ReportStream &operator=(const ReportStream &) = delete;

    void begin(const Report &report);
    void add(const Report &report, const WorkflowResult &r);
    // Throws std::runtime_error when writing failed (disk full, closed pipe).
    void finish(const Report &report);
    // Puts a finished file report in place (nothing to do on stdout). Throws std::runtime_error.
    void commit();
    // True when the report goes to stdout (nothing else may be printed there).
    bool on_stdout() const { return output_.empty(); }
    const std::string &format() const { return format_; }
    // The report file; null on stdout.
    const OutputFile *file() const { return file_.get(); }

  private:
    std::ostream &out();
    std::string format_, output_;
    TableStyle style_;
    bool with_samples_;
    CsvMetadata csv_metadata_;
    std::unique_ptr<OutputFile> file_;
};
// Inverse of report_to_json (for `plot`); throws std::runtime_error naming what is missing.
Report report_from_json(const nlohmann::json &json);

// Writes the whole report in `format` (table | csv | json) to `output` ("" = stdout), a file
// only once it is complete. Throws
// std::runtime_error when the file cannot be written, std::invalid_argument for a bad format.
void write_report(const Report &report, const std::string &format, const std::string &output);

// "Gen5 x16" or "n/a".
std::string link_or_na(const DeviceSummary &d);

} // namespace xfer::tool
