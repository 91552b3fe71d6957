import ArgumentParser

/// What a build of `strobe` without the package trait `Server` (the default,
/// lean build) says when asked for what only the full build holds.
enum LeanBuild {
    /// The command that builds the full `strobe`, from the repository root.
    static let fullBuild = "swift build -c release --package-path Tools --traits Server --product strobe"

    /// The refusal of `feature` (a command or a flag): what it needs and how
    /// to build a `strobe` that has it.
    static func missing(_ feature: String) -> String {
        "\(feature) is not in this strobe, a lean build without the server stack (the package trait Server); "
            + "build the full one with `\(fullBuild)` (or `make strobe`)"
    }
}

#if !Server
/// `strobe serve` in the lean build: says how to build the `strobe` that
/// serves, and exits with status 2, whatever the arguments.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Accept traces over HTTP (not in this lean build: build with the package trait Server).")

    /// Whatever was given; none of it is read.
    @Argument(parsing: .allUnrecognized)
    var arguments: [String] = []

    func run() throws {
        throw CommandFailure.badInput(LeanBuild.missing("strobe serve"))
    }
}
#endif
