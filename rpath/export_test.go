package rpath

import "github.com/rocmdoctor/rocmdoctor/elfx"

// RememberedSearches is how many searches r remembers (searchKey).
func RememberedSearches(r *Resolver) int { return len(r.searches) }

// GlibcMinorFor is the minor version of the target's glibc that r uses
// for objects with header h (-1: unknown), reading it if it has not yet.
func GlibcMinorFor(r *Resolver, h elfx.Header) int {
	return r.glibcMinorOf(&Result{Root: &Object{Header: h}})
}

// SetBannerChunk makes GlibcMinor read .rodata n bytes at a time until
// the returned function restores it.
func SetBannerChunk(n int) (restore func()) {
	old := bannerChunk
	bannerChunk = n
	return func() { bannerChunk = old }
}

// SystemDirs is systemDirs, for tests.
var SystemDirs = systemDirs
