// Package broker is Runnel's RocketMQ broker: it serves the remoting
// protocol to producers, consumers and admin tools, keeps messages in the
// store, and registers its topics with the name servers.
//
// One file per concern: send.go (SEND_MESSAGE, _V2, SEND_BATCH_MESSAGE),
// pull.go (PULL_MESSAGE with long polling), offset.go (consumer offsets and
// queue offset queries), heartbeat.go (HEART_BEAT, consumer lists,
// unregistering, NOTIFY_CONSUMER_IDS_CHANGED), lock.go (orderly queue locks),
// admin.go (topic admin and stats), admin_groups.go and admin_tools.go
// (group, connection and config listings for tools), reset.go (INVOKE_BROKER_TO_RESET_OFFSET),
// consumer_admin.go (admin requests forwarded to a consumer client:
// GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY,
// INVOKE_BROKER_TO_GET_CONSUMER_STATUS), query.go (messages by id
// and key), register.go (name server registration), topic.go (the topic
// table), conf.go (RocketMQ broker.conf keys), sendback.go
// (CONSUMER_SEND_MSG_BACK: %RETRY% and %DLQ%), retry.go (the send path's
// %RETRY% bookkeeping and DELAY diversion), schedule_wire.go (delayed
// delivery), transaction.go (half messages and END_TRANSACTION), txcheck.go
// (CHECK_TRANSACTION_STATE to producers of unfinished transactions). The pure tables it wires live in sub-packages: clients, lock,
// longpoll, offsets; delayed delivery lives in schedule.
//
// Invariants:
//   - every request gets an answer (or none for oneway requests): bad input
//     gets a RocketMQ response code with a remark, never a panic or a hang;
//   - a request forwarded to a consumer client holds no goroutine while the
//     client thinks, and is answered within ConsumerCallTimeout;
//   - a pull that finds nothing with the SUSPEND flag is held (no goroutine)
//     until a message arrives on its queue or its suspend time passes, and
//     is then answered by running the pull again; it is never answered
//     SUCCESS without messages;
//   - consumer offsets are applied in memory as they arrive and written to
//     the store every OffsetPersistInterval and on Close;
//   - the topic table is written through to the store, and every change is
//     registered with the name servers at once.
//
// Close runs in a fixed order: held pulls are answered, background loops
// stop, the server closes its connections (waiting for handlers), offsets
// are persisted, the broker unregisters from the name servers, and the store
// closes.
package broker
