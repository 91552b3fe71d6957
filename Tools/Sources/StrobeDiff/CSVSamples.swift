import Foundation
import StrobeJudgement
import StrobeResults

/// Samples measured elsewhere, as CSV: a header with at least `metric` and
/// `value`, optionally `unit`, `better` (`lower` or `higher`), `run` (the
/// process that produced the row: rows of one run are its iterations) and
/// `round` (pairs a baseline run with a candidate run of the same round);
/// any other column is a dimension, such as `device`. Without `run`, the
/// whole file is one run.
package enum CSVSamples {
    static func parse(file: String) throws(DiffError) -> [SampleSet.Series] {
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw DiffError(path: file, problem: "cannot read as UTF-8 text: \(error.localizedDescription)")
        }
        return try parse(text: text, file: file)
    }

    package static func parse(text: String, file: String) throws(DiffError) -> [SampleSet.Series] {
        let rows = try records(text, file: file)
        guard let header = rows.first else { throw DiffError(path: file, problem: "empty CSV file") }
        let columns = header.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let metricColumn = columns.firstIndex(of: "metric"), let valueColumn = columns.firstIndex(of: "value")
        else {
            throw DiffError(
                path: file, problem: "line 1: the header needs `metric` and `value` columns, found \(header.fields)")
        }
        let unitColumn = columns.firstIndex(of: "unit")
        let betterColumn = columns.firstIndex(of: "better")
        let runColumn = columns.firstIndex(of: "run")
        let roundColumn = columns.firstIndex(of: "round")
        let ignored: Set<String> = ["iteration", "test"]
        let dimensionColumns = columns.indices.filter {
            ![metricColumn, valueColumn, unitColumn, betterColumn, runColumn, roundColumn].contains($0)
                && !ignored.contains(columns[$0])
        }
        struct Key: Hashable {
            var metric: String
            var dimensions: [String: String]
            var run: String
            var round: Int?
        }
        var order: [Key] = []
        var grouped: [Key: SampleSet.Series] = [:]
        for row in rows.dropFirst() {
            guard row.fields.count == columns.count else {
                throw DiffError(
                    path: file, problem: "line \(row.line): \(row.fields.count) fields, the header has \(columns.count)"
                )
            }
            let metric = row.fields[metricColumn]
            guard !metric.isEmpty else { throw DiffError(path: file, problem: "line \(row.line): empty metric name") }
            guard let value = Double(row.fields[valueColumn].trimmingCharacters(in: .whitespaces)), value.isFinite
            else {
                throw DiffError(
                    path: file,
                    problem: "line \(row.line), column value: \"\(row.fields[valueColumn])\" is not a number")
            }
            let unit = unitColumn.map { row.fields[$0] } ?? ""
            var better = MetricDirection.lower
            if let betterColumn {
                switch row.fields[betterColumn].lowercased() {
                case "lower", "": better = .lower
                case "higher": better = .higher
                case let other:
                    throw DiffError(
                        path: file, problem: "line \(row.line), column better: \"\(other)\" is neither lower nor higher"
                    )
                }
            }
            var dimensions: [String: String] = [:]
            for column in dimensionColumns { dimensions[columns[column]] = row.fields[column] }
            let runField = runColumn.map { row.fields[$0].trimmingCharacters(in: .whitespaces) } ?? ""
            var round: Int?
            if let roundColumn {
                let text = row.fields[roundColumn].trimmingCharacters(in: .whitespaces)
                if !text.isEmpty {
                    guard let value = Int(text), value >= 0 else {
                        throw DiffError(
                            path: file,
                            problem: "line \(row.line), column round: \"\(text)\" is not a round number (0 or more)")
                    }
                    round = value
                }
            }
            let key = Key(
                metric: metric, dimensions: dimensions, run: runField.isEmpty ? file : "\(file)#\(runField)",
                round: round)
            if var existing = grouped[key] {
                guard existing.unit == unit else {
                    throw DiffError(
                        path: file,
                        problem: "line \(row.line): metric \(metric) has unit \(unit) here and \(existing.unit) before")
                }
                existing.samples.append(value)
                grouped[key] = existing
            } else {
                order.append(key)
                grouped[key] = SampleSet.Series(
                    metric: metric, unit: unit, better: better, samples: [value], dimensions: dimensions,
                    source: file, run: key.run, round: round)
            }
        }
        return order.compactMap { grouped[$0] }
    }

    struct Record {
        var line: Int
        var fields: [String]
    }

    /// Splits CSV text into records: quoted fields with doubled quotes,
    /// commas and newlines inside quotes, CRLF or LF, blank lines skipped.
    static func records(_ text: String, file: String) throws(DiffError) -> [Record] {
        var records: [Record] = []
        var fields: [String] = []
        var field = ""
        var inQuotes = false
        var line = 1
        var recordLine = 1
        var characters = Array(text.unicodeScalars)
        if characters.first == "\u{FEFF}" { characters.removeFirst() }
        var index = 0
        func endRecord() {
            fields.append(field)
            field = ""
            if !(fields.count == 1 && fields[0].isEmpty) { records.append(Record(line: recordLine, fields: fields)) }
            fields = []
        }
        while index < characters.count {
            let character = characters[index]
            if inQuotes {
                if character == "\"" {
                    if index + 1 < characters.count, characters[index + 1] == "\"" {
                        field.unicodeScalars.append("\"")
                        index += 1
                    } else {
                        inQuotes = false
                    }
                } else {
                    if character == "\n" { line += 1 }
                    field.unicodeScalars.append(character)
                }
            } else {
                switch character {
                case "\"":
                    guard field.isEmpty else {
                        throw DiffError(path: file, problem: "line \(line): a quote inside an unquoted field")
                    }
                    inQuotes = true
                case ",":
                    fields.append(field)
                    field = ""
                case "\r":
                    break
                case "\n":
                    endRecord()
                    line += 1
                    recordLine = line
                default:
                    field.unicodeScalars.append(character)
                }
            }
            index += 1
        }
        if inQuotes { throw DiffError(path: file, problem: "line \(recordLine): a quoted field is never closed") }
        if !field.isEmpty || !fields.isEmpty { endRecord() }
        return records
    }
}
