package symcheck

import (
	"context"
)

// CheckLinkInputsOnly is CheckLinkInputs for the names that start with only.
func CheckLinkInputsOnly(ctx context.Context, paths []string, only string) (*StaticResult, error) {
	return checkLinkInputs(ctx, paths, only)
}
