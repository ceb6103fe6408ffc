// Package console is Runnel's web console: pages to see and steer a
// RocketMQ cluster in a browser (its brokers, topics, consumer groups,
// messages, dead letters, access control and producers), with charts of
// rates and lag over the last minutes, and a JSON API under the pages.
//
// It speaks to the cluster only through client/admin, the admin requests
// of RocketMQ's remoting protocol, so it works against Runnel and against
// any Apache RocketMQ cluster alike; internal/lint keeps it from importing
// the broker, the name server or the store.
//
// Shape:
//   - console.go owns the process: the HTTP server, the sampling loop and
//     the admin client, started by Start and stopped once by Close.
//   - gather.go reads the cluster every Config.SampleInterval into a
//     snapshot (swapped whole, never changed after) and feeds the series
//     of console/sampler; list pages are served from the snapshot, so a
//     page over 10,000 topics costs a filter, a sort and a slice, never a
//     request per topic. Detail pages ask the cluster when they are shown.
//   - routes.go maps every page to a model builder; the same model is
//     rendered as HTML (templates in assets/) or written as JSON under
//     /api/, so the pages and the API never disagree.
//   - session.go holds logins and CSRF tokens: every mutating request
//     carries a token bound to its session, and with a login configured
//     every page but /login and /healthz asks for one.
//
// Invariants:
//   - Everything shown is escaped by html/template or, for charts, by
//     console/chart: a message body or a topic name holding markup is
//     shown as text.
//   - A secret (a user's password, a plain ACL account's secret key, the
//     console's own credentials) is never rendered nor returned by the
//     API.
//   - A cluster's refusal is shown in words (the response code's name,
//     its meaning, the remark and who answered), never as a blank page.
package console
