package clients

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
)

// Migrations create the client registry (part of credit.Migrations). Uniqueness lives in the database so that
// concurrent creates cannot both win: the pair (identificacion, codigo_empresa) always, and
// codigo_cliente when present (NULLs never collide in a unique index, on either engine).
//
// Columns beyond the specification: version (grows with every data change, so a sync that raced
// an update does not mark the client synced), search_text (lower-cased nombre_cliente,
// identificacion and codigo_cliente, lowered in Go so search ignores case beyond ASCII on SQLite
// too) and erp_sync_claim / erp_sync_claimed_at (an ERP sync in flight, so two concurrent syncs
// never both call the ERP).
var Migrations = []storage.Migration{
	{
		Name: "20261122000100_create_clients",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx,
				`CREATE TABLE clients (
					id $ID,
					codigo_cliente VARCHAR(80),
					codigo_empresa VARCHAR(20) NOT NULL,
					nombre_cliente VARCHAR(255) NOT NULL,
					identificacion VARCHAR(50) NOT NULL,
					email VARCHAR(255),
					telefono_1 VARCHAR(50),
					telefono_2 VARCHAR(50),
					direccion_1 TEXT,
					codigo_vendedor VARCHAR(100),
					termino_pagos VARCHAR(100),
					limite_credito_1 $DECIMAL(14,2),
					limite_credito_2 $DECIMAL(14,2),
					codigo_sucursal VARCHAR(50),
					localizacion VARCHAR(50),
					lista_precios VARCHAR(50),
					nivel_riesgo VARCHAR(50),
					extra_fields $JSON,
					erp_synced BOOLEAN NOT NULL DEFAULT FALSE,
					erp_response $JSON,
					erp_synced_at $TIMESTAMP,
					source_system VARCHAR(50) NOT NULL,
					created_at $TIMESTAMP NOT NULL,
					updated_at $TIMESTAMP NOT NULL,
					version BIGINT NOT NULL DEFAULT 1,
					search_text TEXT NOT NULL DEFAULT '',
					erp_sync_claim VARCHAR(36),
					erp_sync_claimed_at $TIMESTAMP
				)`,
				`CREATE UNIQUE INDEX clients_identificacion_empresa_key ON clients (identificacion, codigo_empresa)`,
				`CREATE UNIQUE INDEX clients_codigo_cliente_key ON clients (codigo_cliente)`,
			)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `DROP TABLE clients`)
		},
	},
	{
		// SQLite keeps every digit of an amount only as text (storage.MoneyAsText).
		Name: "20261125000500_clients_money_as_text",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.MoneyAsText(ctx, tx, "clients", "limite_credito_1", "limite_credito_2")
		},
		Down: func(context.Context, bun.Tx) error { return nil },
	},
}
