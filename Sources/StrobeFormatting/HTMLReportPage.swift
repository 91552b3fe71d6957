/// The self-contained pages (no script, nothing fetched) of the reports
/// that plot their numbers (`strobe fleet` and `strobe trend`): one look,
/// one way to start and end a page, one legend entry.
public enum HTMLReportPage {
    /// The rules every such page shares: the page, its headings, the
    /// verdicts' colours, the plots' text and axes, the legend's dots.
    private static let sharedStyle = """
        body{font:14px/1.45 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0;color:#1d1d1f;
        background:#f6f6f8}
        main{max-width:1000px;margin:0 auto;padding:28px 24px 48px}
        h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 10px}
        .sub{color:#6e6e73;margin:0 0 18px}
        .regression{color:#c62828;font-weight:600}.improvement{color:#2e7d32;font-weight:600}
        svg text{font:11px -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;fill:#48484a}
        svg .axis{stroke:#c7c7cc}
        .legend i{display:inline-block;width:10px;height:10px;border-radius:50%;margin-right:5px}

        """

    /// The start of a page titled `title`, up to and with `<main>`: the
    /// shared rules, then the page's own `style` (rules of its own, and
    /// any that refine the shared ones).
    public static func start(title: String, style: String) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(HTMLText.escape(title))</title>
        <style>
        \(sharedStyle)\(style)</style></head><body><main>
        """
    }

    /// The end of a page begun with ``start(title:style:)``.
    public static let end = "</main></body></html>\n"

    /// One entry of a plot's legend: a dot of `colour`, then `label`.
    public static func legendEntry(colour: String, label: String) -> String {
        "<span><i style=\"background:\(colour)\"></i>\(HTMLText.escape(label))</span>"
    }
}
