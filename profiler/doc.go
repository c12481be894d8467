// Package profiler measures latency curves L(b,p), utilisations and co-location
// pairs, fits curves to them, and keeps them in the SQLite store.
package profiler
