package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/platform/integrations/topup"
)

// settings are the top-up service's own variables, beside internal/config's:
//
//	RECARGAS_PRODUCTS_FILE             JSON file replacing the product mapping (see topup.ParseProducts)
//	RECARGAS_PRODUCTS                  the same JSON inline (the file wins when both are set)
//	RECARGAS_RECONCILE_INTERVAL        seconds between reconciler passes (default 60; 0 disables the reconciler in this instance)
//	RECARGAS_RECONCILE_PENDING_AFTER   seconds before a pending record counts as abandoned (default 300)
//	RECARGAS_RECONCILE_RETRY_AFTER     seconds an unavailable record rests between two looks (default 60)
//	RECARGAS_RECONCILE_MAX_RETRIES     times an unavailable top-up is sent again (default 3; -1 never)
type settings struct {
	Products          *topup.Products
	ProductsSource    string // "default", the file name, or "RECARGAS_PRODUCTS"
	Reconcile         topup.ReconcileConfig
	ReconcileDisabled bool
}

func loadSettings(env map[string]string) (settings, error) {
	var s settings
	var problems []string
	switch {
	case strings.TrimSpace(env["RECARGAS_PRODUCTS_FILE"]) != "":
		path := strings.TrimSpace(env["RECARGAS_PRODUCTS_FILE"])
		p, err := topup.LoadProducts(path)
		if err != nil {
			problems = append(problems, "RECARGAS_PRODUCTS_FILE: "+err.Error())
		}
		s.Products, s.ProductsSource = p, path
	case strings.TrimSpace(env["RECARGAS_PRODUCTS"]) != "":
		p, err := topup.ParseProducts([]byte(env["RECARGAS_PRODUCTS"]))
		if err != nil {
			problems = append(problems, "RECARGAS_PRODUCTS: "+err.Error())
		}
		s.Products, s.ProductsSource = p, "RECARGAS_PRODUCTS"
	default:
		s.Products, s.ProductsSource = topup.DefaultProducts(), "default"
	}
	seconds := func(name string, def time.Duration, allowZero bool) time.Duration {
		v := strings.TrimSpace(env[name])
		if v == "" {
			return def
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || (f == 0 && !allowZero) {
			problems = append(problems, name+" must be a positive number of seconds")
			return def
		}
		return time.Duration(f * float64(time.Second))
	}
	s.Reconcile.Interval = seconds("RECARGAS_RECONCILE_INTERVAL", topup.DefaultReconcileInterval, true)
	s.ReconcileDisabled = s.Reconcile.Interval == 0
	s.Reconcile.PendingAfter = seconds("RECARGAS_RECONCILE_PENDING_AFTER", topup.DefaultReconcilePendingAfter, false)
	s.Reconcile.RetryAfter = seconds("RECARGAS_RECONCILE_RETRY_AFTER", topup.DefaultReconcileRetryAfter, false)
	s.Reconcile.MaxRetries = topup.DefaultReconcileMaxRetries
	if v := strings.TrimSpace(env["RECARGAS_RECONCILE_MAX_RETRIES"]); v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil || n < -1:
			problems = append(problems, "RECARGAS_RECONCILE_MAX_RETRIES must be an integer >= -1")
		case n == 0:
			s.Reconcile.MaxRetries = -1 // 0 retries; topup treats 0 as "default"
		default:
			s.Reconcile.MaxRetries = n
		}
	}
	if len(problems) > 0 {
		return s, errors.New("invalid configuration: " + strings.Join(problems, "; "))
	}
	return s, nil
}

func (s settings) String() string {
	return fmt.Sprintf("products=%s reconcile_interval=%s pending_after=%s retry_after=%s max_retries=%d",
		s.ProductsSource, s.Reconcile.Interval, s.Reconcile.PendingAfter, s.Reconcile.RetryAfter, s.Reconcile.MaxRetries)
}
