//go:build !unix

package main

// fileLimit is unknown on this system: connections are capped only by a
// configured max_connections.
func fileLimit() uint64 { return 0 }
