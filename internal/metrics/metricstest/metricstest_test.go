package metricstest_test

import (
	"testing"

	"github.com/platform/integrations/internal/metrics/metricstest"
)

func TestParse(t *testing.T) {
	m, err := metricstest.Parse("# HELP x A counter.\n# TYPE x counter\nx{a=\"1\",b=\"two words\"} 3\n\ny 2.5e-05\n")
	if err != nil {
		t.Fatal(err)
	}
	if m[`x{a="1",b="two words"}`] != 3 || m["y"] != 2.5e-05 || len(m) != 2 {
		t.Errorf("Parse = %v", m)
	}
	if _, err := metricstest.Parse("x{a=\"1\"} many\n"); err == nil {
		t.Error("a sample without a number parsed")
	}
}
