// Package hrtimer gives timers that fire within tens of microseconds of
// their time, for the places where gpuletd acts on a moment rather than
// waits for one: an executor starting a deferred batch, the emulated
// engine's batch times, the load generator's arrivals.
//
// The Go runtime keeps its timers in the network poller, and on Linux the
// poller's epoll_wait takes its timeout in whole milliseconds, rounded up:
// a process with nothing else to do wakes for a timer up to a millisecond
// late. A timerfd is a file the same poller watches, and the kernel wakes
// the poller the moment it expires. On a 2-core VM (BenchmarkLateness,
// go1.26), timers of 1 µs, 300 µs and 2.5 ms fired 13, 803 and 712 µs late
// at p50 on the runtime's timers (1.1, 0.93 and 0.90 ms at p99), and 41, 71
// and 87 µs late on a Timer (105, 165 and 216 µs at p99).
//
// Elsewhere (and where a timerfd cannot be made) the package falls back to
// the runtime's timers, which fire late but fire.
package hrtimer
