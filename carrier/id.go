package carrier

import "github.com/google/uuid"

// crockford is Crockford's base32 alphabet: digits and upper-case letters
// without I, L, O and U, in ASCII order so that the text sorts like the
// number.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// ExternalTransactionIDLength is the length of NewExternalTransactionID's ids.
const ExternalTransactionIDLength = 26

// NewExternalTransactionID returns a new id for EXTERNALTRANSACTIONID: 26
// characters of Crockford base32 (digits and upper-case letters, nothing an
// XML document, a URL or a carrier database column could mangle) encoding a
// UUIDv7.
//
// Why it is unique across processes and machines: the UUIDv7 holds the Unix
// time in milliseconds, a 12-bit sub-millisecond sequence that the process
// keeps strictly increasing, and 62 bits from crypto/rand. Ids of one
// process never repeat; two processes collide only if they draw the same 62
// random bits for the same millisecond and sequence, a chance below 1e-7
// even for a million ids made in the same millisecond. Ids of one process
// sort in creation order, which keeps indexes on them append-mostly.
func NewExternalTransactionID() string {
	// NewV7 fails only when crypto/rand does, which the runtime already
	// treats as fatal.
	u := uuid.Must(uuid.NewV7())
	return encodeCrockford(u)
}

// encodeCrockford writes 128 bits as 26 base32 digits, most significant
// first; the first digit carries the top 3 bits.
func encodeCrockford(u [16]byte) string {
	var out [ExternalTransactionIDLength]byte
	hi := uint64(u[0])<<56 | uint64(u[1])<<48 | uint64(u[2])<<40 | uint64(u[3])<<32 |
		uint64(u[4])<<24 | uint64(u[5])<<16 | uint64(u[6])<<8 | uint64(u[7])
	lo := uint64(u[8])<<56 | uint64(u[9])<<48 | uint64(u[10])<<40 | uint64(u[11])<<32 |
		uint64(u[12])<<24 | uint64(u[13])<<16 | uint64(u[14])<<8 | uint64(u[15])
	for i := ExternalTransactionIDLength - 1; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}
