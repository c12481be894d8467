// Package systemd ships the unit file, the default configuration and the
// install script, and embeds the default configuration for the daemon.
package systemd
