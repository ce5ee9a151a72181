// Package metricstest reads a Prometheus text exposition (GET /metrics) in tests.
package metricstest

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse maps every sample of a text exposition, named as exposed (name{labels}, labels in the
// order the registry writes them: sorted), to its value. Comments and blank lines are skipped.
func Parse(exposition string) (map[string]float64, error) {
	out := map[string]float64{}
	for line := range strings.Lines(exposition) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, fmt.Errorf("metricstest: sample without a value: %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metricstest: sample %q: %w", line, err)
		}
		out[line[:i]] = v
	}
	return out, nil
}
