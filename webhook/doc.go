// Package webhook puts the kit's handlers behind real HTTP: a Receiver, an
// http.Handler over any lab.Processor, that authenticates a request the way
// Standard Webhooks specifies, decodes its event strictly and answers each
// outcome with its own status; and a Provider, the sender's side, that signs
// its requests, counts only a 2xx as delivered, gives up on an attempt after
// its own timeout and retries on Svix's schedule.
//
// The receiver is production-shaped: it has no test hooks, and it imports
// no database driver. Everything that can be refused is refused before the
// processor runs, in this order, so that a request that is not provably the
// sender's own never reaches the database and can never take an event id
// first:
//
//  1. the method (405), the content type and the content coding (415);
//  2. the body's size (413) and how long it takes to come (408), read
//     whole before anything else;
//  3. the signature over the raw bytes, its timestamp and its sender (401);
//  4. the body's shape: one JSON object with exactly the known fields, of
//     the right types, each at most once (400);
//  5. only then the event, whose key is the signed webhook-id and whose
//     source is the integration whose secret verified the signature.
//
// See Receiver for the status of each outcome and why.
package webhook
