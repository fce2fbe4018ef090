package registry

import (
	"time"
)

// parseRegistryTime parses a publish or upload time as upstreams write it (RFC 3339 with
// "Z" or an offset, with or without fractions).
func parseRegistryTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// formatUploadTime writes the PEP 700 form YYYY-MM-DDTHH:MM:SS.ffffffZ.
func formatUploadTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}
