// docs/recording.md: "Traces say where they come from".
import Strobe

func startAFieldSession(appVersion: String, build: String, model: String, osVersion: String) throws -> TraceSession {
    var configuration = TraceConfiguration(outputPath: "/tmp/session.pftrace")
    configuration.samplingProbability = 0.01
    configuration.metadata = TraceMetadata(
        appName: "Lens", appVersion: appVersion, build: build,
        deviceModel: model, osVersion: osVersion,
        dimensions: ["device.class": "mid"])
    return try TraceSession.start(configuration)
}
