// SPDX-License-Identifier: Apache-2.0
#include <iostream>
#include <stdexcept>

#include "compare.hpp"
#include "report/report.hpp"

namespace xfer::tool {

int failed_checks(const Report &report) {
    int failed = 0;
    for (const WorkflowResult &r : report.results)
        if (!r.error.empty() || r.verification.state == Verification::State::failed) ++failed;
    // A survey's rank that stopped before or between its workflows has no result to show it.
    if (report.survey)
        for (const RankInfo &rank : report.survey->ranks)
            if (!rank.error.empty()) ++failed;
    return failed;
}

std::string verdict_line(const Report &report) {
    const int failed = failed_checks(report);
    return failed == 0 ? "PASS" : "FAIL (" + std::to_string(failed) + (failed == 1 ? " check" : " checks") + " failed)";
}

ReportStream::ReportStream(const std::string &format, const std::string &output, TableStyle style, bool with_samples,
                           CsvMetadata csv_metadata)
    : format_(format), output_(output), style_(style), with_samples_(with_samples), csv_metadata_(csv_metadata) {
    if (format != "table" && format != "csv" && format != "json")
        throw std::invalid_argument("unknown report format '" + format + "' (use table, csv or json)");
    if (!output.empty()) file_ = std::make_unique<OutputFile>(output, "report");
}

std::ostream &ReportStream::out() { return file_ ? file_->stream() : std::cout; }

void ReportStream::begin(const Report &report) {
    if (format_ == "table")
        write_table_header(out(), report);
    else if (format_ == "csv")
        write_csv_header(out(), report, csv_metadata_);
    out().flush();
}

void ReportStream::add(const Report &report, const WorkflowResult &r) {
    if (format_ == "table")
        write_table_result(out(), r, style_);
    else if (format_ == "csv")
        write_csv_result(out(), report, r);
    out().flush();
}

void ReportStream::finish(const Report &report) {
    if (format_ == "table") {
        if (!report.recommendations.empty()) write_comparison(out(), report);
        if (report.survey) write_survey_summary_table(out(), *report.survey);
        out() << verdict_line(report) << '\n';
    } else if (format_ == "json") {
        out() << report_to_json(report, with_samples_).dump(2) << '\n';
    }
    out().flush();
    if (!out()) throw std::runtime_error("cannot write the report to '" + (output_.empty() ? "stdout" : output_) + "'");
}

void ReportStream::commit() {
    if (file_) file_->commit();
}

void write_report(const Report &report, const std::string &format, const std::string &output) {
    ReportStream stream(format, output, TableStyle::compact, false);
    stream.begin(report);
    for (const WorkflowResult &r : report.results) stream.add(report, r);
    stream.finish(report);
    stream.commit();
}

} // namespace xfer::tool
