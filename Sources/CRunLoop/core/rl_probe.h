/*
 * rl_probe.h: the loop's USDT probes (provider "crunloop"), at the points
 * CF's loop traces on macOS. Each is a single nop in the code plus a note in
 * the ELF file (.note.stapsdt) that tells a tracer (bpftrace, perf,
 * SystemTap) where it is and where its arguments live; attaching one turns
 * the nop into a breakpoint, so an untraced loop pays for the nop and for
 * having the arguments at hand, no more. docs/PROBES.md lists them.
 *
 * They come from systemtap's <sys/sdt.h> (Debian: systemtap-sdt-dev); where
 * it is missing, or the build defines RL_NO_PROBES, every probe compiles to
 * nothing (the Makefile says so in one line).
 */
#ifndef RL_PROBE_H
#define RL_PROBE_H

#if !defined(RL_NO_PROBES) && defined(__has_include)
#if __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define RL_HAVE_PROBES 1
#endif
#endif

#ifdef RL_HAVE_PROBES
#define RL_PROBE1(name, a)          STAP_PROBE1(crunloop, name, a)
#define RL_PROBE2(name, a, b)       STAP_PROBE2(crunloop, name, a, b)
#define RL_PROBE3(name, a, b, c)    STAP_PROBE3(crunloop, name, a, b, c)
#define RL_PROBE4(name, a, b, c, d) STAP_PROBE4(crunloop, name, a, b, c, d)
#else
/* The arguments are still "used", so a value computed only for a probe
   draws no warning; the compiler drops them. */
#define RL_PROBE1(name, a)          ((void)(a))
#define RL_PROBE2(name, a, b)       ((void)(a), (void)(b))
#define RL_PROBE3(name, a, b, c)    ((void)(a), (void)(b), (void)(c))
#define RL_PROBE4(name, a, b, c, d) ((void)(a), (void)(b), (void)(c), (void)(d))
#endif

#endif
