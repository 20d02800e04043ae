// Package mapfile maps files read-only where the host allows it.
package mapfile
