// Package web serves the admin page (embedded assets) and its handlers. It
// holds no state of its own.
package web
