package rpath

// RememberedSearches is how many searches r remembers (searchKey).
func RememberedSearches(r *Resolver) int { return len(r.searches) }
