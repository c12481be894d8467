// Package web serves the admin page of gpuletd: plain HTML, CSS and
// JavaScript modules embedded in the binary, with no build step and nothing
// fetched from the network at run time. The page reads the daemon's admin
// API (/api/v1/status, /api/v1/models/{m}/profile, /api/v1/events/stream)
// and draws every device cut into its gpu-lets to scale, the models' table,
// their L(b,p) curves with the knee, and the live event feed.
//
// The package holds no state of its own: Handler serves the embedded files.
package web
