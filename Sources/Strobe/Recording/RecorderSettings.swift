/// What a recorder copies from its session at attach time.
struct RecorderSettings {
    enum Policy { case discardNewest, overwriteOldest }
    enum ResourceUsage {
        case never
        case all
        case named(Set<UInt64>, Set<String>)
    }

    var policy: Policy = .discardNewest
    var maximumChunks = 1
    var resourceUsage: ResourceUsage = .never
    var flags: UInt64 = 0
    /// Where events are also announced; nil when the session has no signposts.
    var signposts: SignpostEmitter?
}
