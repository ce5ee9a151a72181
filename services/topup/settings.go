package main

import (
	"fmt"

	"github.com/platform/integrations/internal/config"
	"github.com/platform/integrations/topup"
)

// settings are what the top-up service builds from config.Recargas before it starts: the
// product mapping (RECARGAS_PRODUCTS_FILE or RECARGAS_PRODUCTS, else the specification's
// table) and the reconciler's RECARGAS_RECONCILE_* settings.
type settings struct {
	Products          *topup.Products
	Reconcile         topup.ReconcileConfig
	ReconcileDisabled bool
}

func loadSettings(r config.Recargas) (settings, error) {
	s := settings{
		Reconcile: topup.ReconcileConfig{
			Interval:     r.ReconcileInterval,
			PendingAfter: r.ReconcilePendingAfter,
			RetryAfter:   r.ReconcileRetryAfter,
			MaxRetries:   r.ReconcileMaxRetries,
		},
		ReconcileDisabled: r.ReconcileInterval == 0,
	}
	if r.ReconcileMaxRetries == 0 {
		s.Reconcile.MaxRetries = -1 // no retries; topup reads 0 as "default"
	}
	var err error
	switch {
	case r.ProductsFile != "":
		if s.Products, err = topup.LoadProducts(r.ProductsFile); err != nil {
			return s, fmt.Errorf("invalid configuration: RECARGAS_PRODUCTS_FILE: %w", err)
		}
	case r.Products != "":
		if s.Products, err = topup.ParseProducts([]byte(r.Products)); err != nil {
			return s, fmt.Errorf("invalid configuration: RECARGAS_PRODUCTS: %w", err)
		}
	default:
		s.Products = topup.DefaultProducts()
	}
	return s, nil
}
