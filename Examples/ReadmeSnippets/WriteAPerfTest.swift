// README.md ("Perf tests and the regression gate") and docs/perf-tests.md ("Write a perf test").
import LensKit
import StrobePerf

func lensPerfSuite() async -> Never {
    let applyLens = PerfTest(
        "apply lens",
        metrics: [.interval("lens apply", .sum), .interval("lens apply", .max), .counter("queue depth", .max)],
        setupOnce: {
            // Once per process, before the first iteration: the pipeline is up, its threads are running.
            LensPipeline(configuration: LensPipeline.Configuration())
        },
        measure: { pipeline, context in
            let report = pipeline.run(frames: 8)
            context.report("frames over budget", Double(report.missedDeadlines))
        }
    )
    await PerfSuite("LensPipeline", tests: [applyLens]).main()
}
