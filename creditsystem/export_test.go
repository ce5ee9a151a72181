package creditsystem

// RawResult is the decoded result a RawAnswer marshals, for the tests that compare its JSON
// with json.Marshal's.
func RawResult(r RawAnswer) any { return r.result }
