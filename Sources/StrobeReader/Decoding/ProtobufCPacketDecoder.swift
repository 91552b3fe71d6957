import CProtobufC
import StrobeProtos

/// Decodes any packet of the schema through protobuf-c's generated code.
enum ProtobufCPacketDecoder {
    /// Fills `fields` from the packet in `range`; false when protobuf-c
    /// rejects the bytes.
    static func decode(_ base: UnsafePointer<UInt8>, _ range: Range<Int>, into fields: inout PacketFields) -> Bool {
        guard let packet = perfetto__protos__trace_packet__unpack(nil, range.count, base + range.lowerBound) else {
            return false
        }
        defer { perfetto__protos__trace_packet__free_unpacked(packet, nil) }
        let message = packet.pointee
        if message.has_timestamp != 0 { fields.timestamp = message.timestamp }
        if message.has_timestamp_clock_id != 0 { fields.timestampClockID = message.timestamp_clock_id }
        if message.has_trusted_packet_sequence_id != 0 { fields.sequenceID = message.trusted_packet_sequence_id }
        if message.has_sequence_flags != 0 { fields.sequenceFlags = message.sequence_flags }
        fields.incrementalStateCleared =
            message.has_incremental_state_cleared != 0 && message.incremental_state_cleared != 0
        fields.previousPacketDropped = message.has_previous_packet_dropped != 0 && message.previous_packet_dropped != 0
        fields.firstPacketOnSequence =
            message.has_first_packet_on_sequence != 0 && message.first_packet_on_sequence != 0

        if let interned = message.interned_data?.pointee {
            fields.hasInternedData = true
            for index in 0..<interned.n_event_names {
                guard let entry = interned.event_names[index]?.pointee, entry.has_iid != 0 else { continue }
                fields.eventNames.append((entry.iid, text(entry.name)))
            }
            for index in 0..<interned.n_event_categories {
                guard let entry = interned.event_categories[index]?.pointee, entry.has_iid != 0 else { continue }
                fields.categoryNames.append((entry.iid, text(entry.name)))
            }
            for index in 0..<interned.n_debug_annotation_names {
                guard let entry = interned.debug_annotation_names[index]?.pointee, entry.has_iid != 0 else { continue }
                fields.annotationNames.append((entry.iid, text(entry.name)))
            }
        }
        if let defaults = message.trace_packet_defaults?.pointee {
            var result = PacketFields.Defaults()
            if defaults.has_timestamp_clock_id != 0 { result.timestampClockID = defaults.timestamp_clock_id }
            if let events = defaults.track_event_defaults?.pointee {
                if events.has_track_uuid != 0 { result.trackUUID = events.track_uuid }
                for index in 0..<events.n_extra_counter_track_uuids {
                    result.extraCounterTracks.append(events.extra_counter_track_uuids[index])
                }
                for index in 0..<events.n_extra_double_counter_track_uuids {
                    result.extraDoubleCounterTracks.append(events.extra_double_counter_track_uuids[index])
                }
            }
            fields.defaults = result
        }

        switch message.data_case {
        case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT:
            if let event = message.track_event?.pointee {
                fields.hasEvent = true
                decodeEvent(event, into: &fields.event)
            }
        case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR:
            if let track = message.track_descriptor?.pointee, track.has_uuid != 0 {
                fields.track = decodeTrack(track)
            }
        case PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT:
            if let snapshot = message.clock_snapshot?.pointee {
                fields.hasClockSnapshot = true
                for index in 0..<snapshot.n_clocks {
                    guard let clock = snapshot.clocks[index]?.pointee, clock.has_clock_id != 0 else { continue }
                    fields.clocks.append(
                        .init(
                            id: clock.clock_id, timestamp: clock.timestamp, isIncremental: clock.is_incremental != 0,
                            unitMultiplier: clock.has_unit_multiplier_ns != 0 && clock.unit_multiplier_ns > 0
                                ? clock.unit_multiplier_ns : 1))
                }
            }
        case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_STATS:
            if let stats = message.trace_stats?.pointee {
                var result = PacketFields.StatisticsFields()
                for index in 0..<stats.n_buffer_stats {
                    guard let buffer = stats.buffer_stats[index]?.pointee else { continue }
                    result.buffers.append(
                        (
                            buffer.chunks_written, buffer.chunks_discarded, buffer.chunks_overwritten,
                            buffer.patches_failed
                        ))
                }
                for index in 0..<stats.n_writer_stats {
                    guard let writer = stats.writer_stats[index]?.pointee else { continue }
                    result.writers.append((writer.sequence_id, Int(writer.buffer)))
                }
                fields.statistics = result
            }
        default:
            break
        }
        return true
    }

    private static func text(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
        pointer.map { String(cString: $0) } ?? ""
    }

    private static func decodeEvent(_ event: Perfetto__Protos__TrackEvent, into fields: inout PacketFields.EventFields)
    {
        if event.has_type != 0 { fields.type = UInt64(event.type.rawValue) }
        switch event.name_field_case {
        case PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID: fields.nameIID = event.name_iid
        case PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME: fields.name = text(event.name)
        default: break
        }
        if event.has_track_uuid != 0 { fields.trackUUID = event.track_uuid }
        switch event.counter_value_field_case {
        case PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE:
            fields.counterValue = Double(event.counter_value)
        case PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE:
            fields.counterValue = event.double_counter_value
        default: break
        }
        for index in 0..<event.n_extra_counter_track_uuids {
            fields.extraCounterTracks.append(event.extra_counter_track_uuids[index])
        }
        for index in 0..<event.n_extra_counter_values {
            fields.extraCounterValues.append(Double(event.extra_counter_values[index]))
        }
        for index in 0..<event.n_extra_double_counter_track_uuids {
            fields.extraDoubleCounterTracks.append(event.extra_double_counter_track_uuids[index])
        }
        for index in 0..<event.n_extra_double_counter_values {
            fields.extraDoubleCounterValues.append(event.extra_double_counter_values[index])
        }
        for index in 0..<event.n_category_iids { fields.categoryIIDs.append(event.category_iids[index]) }
        for index in 0..<event.n_categories { fields.categories.append(text(event.categories[index])) }
        for index in 0..<event.n_flow_ids { fields.flowIDs.append(event.flow_ids[index]) }
        for index in 0..<event.n_terminating_flow_ids {
            fields.terminatingFlowIDs.append(event.terminating_flow_ids[index])
        }
        for index in 0..<event.n_debug_annotations {
            guard let annotation = event.debug_annotations[index]?.pointee else { continue }
            var nameIID: UInt64?
            var name: String?
            switch annotation.name_field_case {
            case PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID: nameIID = annotation.name_iid
            case PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME: name = text(annotation.name)
            default: continue
            }
            let value: TraceArgument
            switch annotation.value_case {
            case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE: value = .bool(annotation.bool_value != 0)
            case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE: value = .uint(annotation.uint_value)
            case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE: value = .int(annotation.int_value)
            case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE: value = .double(annotation.double_value)
            case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE: value = .string(text(annotation.string_value))
            case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE: value = .uint(annotation.pointer_value)
            default: continue
            }
            fields.annotations.append((nameIID, name, value))
        }
    }

    private static func decodeTrack(_ track: Perfetto__Protos__TrackDescriptor) -> PacketFields.TrackFields {
        var result = PacketFields.TrackFields(uuid: track.uuid)
        if track.has_parent_uuid != 0 { result.parent = track.parent_uuid }
        switch track.static_or_dynamic_name_case {
        case PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME: result.name = text(track.name)
        case PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_STATIC_NAME:
            result.name = text(track.static_name)
        default: break
        }
        if let process = track.process?.pointee {
            result.process = (
                process.has_pid != 0 ? process.pid : nil, process.process_name.map { String(cString: $0) }
            )
        }
        if let thread = track.thread?.pointee {
            result.thread = (
                thread.has_pid != 0 ? thread.pid : nil, thread.has_tid != 0 ? thread.tid : nil,
                thread.thread_name.map { String(cString: $0) }
            )
        }
        if let counter = track.counter?.pointee {
            var unit: String?
            if let name = counter.unit_name {
                unit = String(cString: name)
            } else if counter.has_unit != 0 {
                switch counter.unit {
                case PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_TIME_NS: unit = "ns"
                case PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_COUNT: unit = "count"
                case PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_SIZE_BYTES: unit = "bytes"
                default: unit = nil
                }
            }
            let threadTime =
                counter.has_type != 0
                && counter.type == PERFETTO__PROTOS__COUNTER_DESCRIPTOR__BUILTIN_COUNTER_TYPE__COUNTER_THREAD_TIME_NS
            result.counter = (
                unit, threadTime,
                counter.has_unit_multiplier != 0 && counter.unit_multiplier != 0 ? counter.unit_multiplier : 1,
                counter.has_is_incremental != 0 && counter.is_incremental != 0
            )
        }
        return result
    }
}
