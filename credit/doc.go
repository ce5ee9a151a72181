// Package credit is the credit service's schema: [Migrations], applied under [MigrationsTable],
// creates the tables of its aggregates, each a package of its own:
//
//   - credit/clients: the client registry and its ERP sync;
//   - credit/consumption: the direct-credit consumption lifecycle;
//   - credit/payments: debt queries, the payment ledger and the ERP hand-over.
//
// Each aggregate package holds its records, their transitions, the rules of its inputs, a Store
// that owns its transactions and a Service with the use cases; docs/architecture.md says where
// each thing lives.
package credit
