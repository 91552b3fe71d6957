// Generated from EmulationPlugin/QEMUCountingPlugin.c by scripts/generate-plugin-source.sh;
// edit the C file and run the script again.

extension EmulationPlugin {
    /// The plugin's C source, the text of `EmulationPlugin/QEMUCountingPlugin.c`.
    static let source = #"""
        // Strobe's instruction-counting plugin for QEMU's user-mode emulator, built
        // into a shared library at run time (EmulationPlugin.swift): StrobePerf holds
        // this file's text (QEMUCountingPluginSource.swift, which
        // scripts/generate-plugin-source.sh writes), so a `strobe` binary needs only a
        // C compiler on the machine, not this file.
        //
        // The plugin counts the guest instructions of every translated block each
        // time the block runs, on the thread that runs it (a counter per virtual CPU,
        // which in user mode is a thread, so no count is lost to a race). It watches
        // for the marking system call `cstrobe_emulation_mark` makes at a measure
        // block's start and end, and at each end appends to its output file the
        // instructions every thread executed since the start, one decimal line per
        // window. It declares the part of QEMU's plugin interface (version 1, QEMU
        // 7.2 and later) it uses, so no QEMU headers are needed to build it.
        //
        // The marking call's number and marks have one definition, in
        // CStrobeCounting's CStrobeInstructions.h: the build passes them as `-D`
        // flags with the values Swift imports from that header.

        #if !defined(CSTROBE_EMULATION_SYSCALL) || !defined(CSTROBE_EMULATION_BEGIN) \
            || !defined(CSTROBE_EMULATION_END)
        #error "build with -D flags for CStrobeInstructions.h's marks (EmulationPlugin.swift's definitions)"
        #endif

        #include <fcntl.h>
        #include <stdbool.h>
        #include <stddef.h>
        #include <stdint.h>
        #include <stdio.h>
        #include <string.h>
        #include <unistd.h>

        typedef uint64_t qemu_plugin_id_t;
        struct qemu_plugin_tb;
        typedef struct {
            const char *target_name;
            struct { int min; int cur; } version;
            bool system_emulation;
        } qemu_info_t;
        typedef void (*translation_callback)(qemu_plugin_id_t, struct qemu_plugin_tb *);
        typedef void (*execution_callback)(unsigned int, void *);
        typedef void (*syscall_callback)(qemu_plugin_id_t, unsigned int, int64_t, uint64_t, uint64_t,
                                         uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
        void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, translation_callback);
        size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
        void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *, execution_callback, int, void *);
        void qemu_plugin_register_vcpu_syscall_cb(qemu_plugin_id_t, syscall_callback);

        __attribute__((visibility("default"))) int qemu_plugin_version = 1;

        #define THREAD_SLOTS 4096

        /* A count per virtual CPU, each on a cache line of its own. */
        static struct { uint64_t instructions; char padding[56]; } slots[THREAD_SLOTS];
        static uint64_t window_start;
        static int output = -1;

        static void block_ran(unsigned int cpu, void *instructions) {
            uint64_t *slot = &slots[cpu % THREAD_SLOTS].instructions;
            __atomic_store_n(slot, __atomic_load_n(slot, __ATOMIC_RELAXED) + (uintptr_t)instructions,
                             __ATOMIC_RELAXED);
        }

        static void block_translated(qemu_plugin_id_t id, struct qemu_plugin_tb *block) {
            (void)id;
            uintptr_t instructions = qemu_plugin_tb_n_insns(block);
            qemu_plugin_register_vcpu_tb_exec_cb(block, block_ran, 0, (void *)instructions);
        }

        static uint64_t every_thread(void) {
            uint64_t sum = 0;
            for (int index = 0; index < THREAD_SLOTS; index++) {
                sum += __atomic_load_n(&slots[index].instructions, __ATOMIC_RELAXED);
            }
            return sum;
        }

        static void system_call(qemu_plugin_id_t id, unsigned int cpu, int64_t number, uint64_t mark,
                                uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                                uint64_t a7, uint64_t a8) {
            (void)id; (void)cpu; (void)a2; (void)a3; (void)a4; (void)a5; (void)a6; (void)a7; (void)a8;
            if (number != CSTROBE_EMULATION_SYSCALL) return;
            if (mark == CSTROBE_EMULATION_BEGIN) {
                window_start = every_thread();
            } else if (mark == CSTROBE_EMULATION_END) {
                char line[32];
                int length = snprintf(line, sizeof line, "%llu\n",
                                      (unsigned long long)(every_thread() - window_start));
                if (write(output, line, (size_t)length) != length) {
                    const char problem[] = "strobe counting plugin: cannot write a count\n";
                    (void)write(2, problem, sizeof problem - 1);
                }
            }
        }

        __attribute__((visibility("default")))
        int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
            if (info->system_emulation) return -1;
            for (int index = 0; index < argc; index++) {
                if (strncmp(argv[index], "out=", 4) == 0) {
                    output = open(argv[index] + 4, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
                }
            }
            if (output < 0) return -1;
            qemu_plugin_register_vcpu_tb_trans_cb(id, block_translated);
            qemu_plugin_register_vcpu_syscall_cb(id, system_call);
            return 0;
        }
        """#
}
