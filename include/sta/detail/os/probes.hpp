// sta-pool: USDT probes (provider "sta") on the slow paths, where STA_POOL_PROBES is on
// (detail/config.hpp). A probe is one nop at its site and a note in .note.stapsdt naming
// it and where its arguments are: `readelf -n libsta_malloc.so` lists them, and perf
// probe, bpftrace and systemtap attach to them in a running program without a rebuild.
// None sits on a fast path (an allocation from a class's list or window, a free onto a
// cache or into a bitmap): those keep their instruction counts.
//
//   probe            arguments                          where
//   segment_mapped   base, huge (1: huge pages)          layout/spans.hpp, map_segment
//   segment_unmapped base                                layout/span_life.hpp, unmap
//   span_purged      span's first byte, bytes            layout/span_life.hpp, purge
//   refill           state, slot (the class's)           layout/spans.hpp, refill
//   free_refused     pointer, what (diag/misuse.hpp's     diag/misuse.hpp, report_bad_free
//                    free_verdict: 1 double free, 2 not   and report_bad_size
//                    a block, 3 bad header, 4 overwritten,
//                    5 wrong size)
//   limit_reached    bytes held, limit, bytes asked      os/memory_account.hpp
//
//   $ sudo bpftrace -e 'usdt:/usr/lib/libsta_malloc.so:sta:span_purged { @[pid] = sum(arg1); }'
//   $ sudo perf probe -x libsta_malloc.so sdt_sta:refill && sudo perf record -e sdt_sta:refill ...
#pragma once

#include "sta/detail/config.hpp"

#if STA_POOL_PROBES
#include <sys/sdt.h>
#define STA_PROBE1(name, a) DTRACE_PROBE1(sta, name, a)
#define STA_PROBE2(name, a, b) DTRACE_PROBE2(sta, name, a, b)
#define STA_PROBE3(name, a, b, c) DTRACE_PROBE3(sta, name, a, b, c)
#else
#define STA_PROBE1(name, a) ((void)(a))
#define STA_PROBE2(name, a, b) ((void)(a), (void)(b))
#define STA_PROBE3(name, a, b, c) ((void)(a), (void)(b), (void)(c))
#endif
