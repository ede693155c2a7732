package contract

import (
	"fmt"
	"strings"
)

// MaxClusterIDLen is the longest cluster id upstream accepts.
const MaxClusterIDLen = 128

// NormalizeClusterID applies upstream's cluster id rule
// (NormalizeAndValidateClusterId + IsValidClusterIdComponent): trailing '/'
// are dropped, and what is left must be 1..128 bytes of [0-9A-Za-z_.-]. It
// returns the normalized id and whether it is valid.
//
// The first byte need not be a letter or digit ("-a", "_", "." and ".." are
// valid), and trailing slashes are accepted ("c-1.x/" is "c-1.x").
func NormalizeClusterID(clusterID string) (string, bool) {
	id := strings.TrimRight(clusterID, "/")
	if id == "" || len(id) > MaxClusterIDLen {
		return "", false
	}
	for i := 0; i < len(id); i++ {
		if !clusterIDByte(id[i]) {
			return "", false
		}
	}
	return id, true
}

// clusterIDByte reports whether c may appear in a cluster id.
func clusterIDByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' ||
		c == '_' || c == '-' || c == '.'
}

// ClusterIDProblem says which part of upstream's rule clusterID breaks
// ("" when it passes).
func ClusterIDProblem(clusterID string) string {
	if _, ok := NormalizeClusterID(clusterID); ok {
		return ""
	}
	id := strings.TrimRight(clusterID, "/")
	switch {
	case id == "":
		return "empty (after dropping trailing slashes)"
	case len(id) > MaxClusterIDLen:
		return fmt.Sprintf("%d bytes, at most %d allowed", len(id), MaxClusterIDLen)
	}
	for i := 0; i < len(id); i++ {
		if !clusterIDByte(id[i]) {
			return fmt.Sprintf("byte %d (%q) is not one of [0-9A-Za-z_.-]", i, id[i])
		}
	}
	return "refused by the cluster id rule"
}
