package queue

import (
	"slices"
	"testing"
)

func TestStringMatchesJavaForm(t *testing.T) {
	mq := MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 3}
	const want = "MessageQueue [topic=T, brokerName=broker-a, queueId=3]"
	if got := mq.String(); got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}

func TestSortOrder(t *testing.T) {
	in := []MessageQueue{
		{"b", "x", 0},
		{"a", "y", 1},
		{"a", "x", 10},
		{"a", "x", 2},
		{"a", "y", 0},
	}
	want := []MessageQueue{
		{"a", "x", 2},
		{"a", "x", 10}, // numeric, not lexical, queue id order
		{"a", "y", 0},
		{"a", "y", 1},
		{"b", "x", 0},
	}
	got := Sorted(in)
	if !slices.Equal(got, want) {
		t.Fatalf("Sorted = %v, want %v", got, want)
	}
	if in[0] != (MessageQueue{"b", "x", 0}) {
		t.Fatalf("Sorted modified its input: %v", in)
	}
}

func TestIsRetryTopic(t *testing.T) {
	if !IsRetryTopic("%RETRY%group") || IsRetryTopic("group") || IsRetryTopic("%DLQ%group") {
		t.Fatal("IsRetryTopic misclassifies")
	}
}
