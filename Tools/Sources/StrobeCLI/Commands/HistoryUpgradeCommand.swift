import ArgumentParser
import StrobeHistory
import StrobeHistoryStore

/// `strobe history upgrade`: a store written by an older strobe brought to
/// this one's schema, with nothing added.
struct HistoryUpgradeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade",
        abstract: "Bring a store written by an older strobe up to this strobe's schema.",
        discussion: """
            Commands that only read (trend, fleet, history list and export, diff --baseline-history) refuse \
            a store at an older schema version and name this command. It applies the migrations after the \
            store's version in one transaction and adds no run. A store already at this strobe's version is \
            left as it is (exit status 0); a missing store is not created, and a store of a newer strobe is \
            not changed (exit status 2 for both).
            """
    )

    @OptionGroup var options: HistoryStoreOptions

    func run() async throws {
        let location: HistoryLocation
        do {
            location = try HistoryLocation.parse(options.store, passwordFile: options.password.file)
        } catch {
            throw CommandFailure.badInput(error.message)
        }
        let current = HistorySchema.currentVersion
        do {
            let store = try await HistoryStores.open(location, access: .readOnly)
            await store.close()
            print("\(location): the schema is at version \(current) already; nothing to upgrade")
        } catch let error as HistoryError where error.kind == .olderSchema {
            do {
                let store = try await HistoryStores.open(location, access: .readWrite)
                await store.close()
            } catch let error as HistoryError {
                throw CommandFailure.badInput(error.message)
            }
            print("\(location): the schema is brought up to version \(current)")
        } catch let error as HistoryError {
            throw CommandFailure.badInput(error.message)
        }
    }
}
