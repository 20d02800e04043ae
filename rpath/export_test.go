package rpath

import "github.com/rocmdoctor/rocmdoctor/elfx"

// RememberedSearches is how many searches r remembers (searchKey).
func RememberedSearches(r *Resolver) int { return len(r.searches) }

// GlibcMinorFor is the minor version of the target's glibc that r uses
// for objects with header h (-1: unknown), reading it if it has not yet.
func GlibcMinorFor(r *Resolver, h elfx.Header) int {
	return r.glibcMinorOf(&Result{Root: &Object{Header: h}})
}

// GlibcMinorIn is GlibcMinor reading .rodata n bytes at a time.
func GlibcMinorIn(path string, n int) int { return glibcMinorIn(path, n) }

// SystemDirs is systemDirs, for tests.
var SystemDirs = systemDirs
