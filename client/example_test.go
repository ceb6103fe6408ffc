package client_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/runnelmq/runnel/client"
)

func ExampleProducer() {
	cfg := client.DefaultProducerConfig()
	cfg.Client.NameServerAddrs = []string{"127.0.0.1:9876"}
	cfg.Group = "orders-producer"
	p, err := client.NewProducer(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := p.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer p.Shutdown(ctx)
	res, err := p.Send(ctx, &client.Message{Topic: "Orders", Tags: "created", Keys: []string{"order-42"}, Body: []byte(`{"id":42}`)})
	if err != nil {
		log.Fatal(err) // e.g. client: send to broker-a (10.0.0.5:10911): CODE 17 TOPIC_NOT_EXIST: topic not exist
	}
	fmt.Println(res.MsgID, res.Queue, res.QueueOffset)
}

func ExampleProducer_Recall() {
	ctx := context.Background()
	var p *client.Producer // started, as in ExampleProducer
	res, err := p.Send(ctx, &client.Message{Topic: "Reminders", Body: []byte("call back"), DeliverAfter: time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	// Keep res.RecallHandle; later, before the hour is out, any producer
	// may withdraw the message with it.
	id, err := p.Recall(ctx, "Reminders", res.RecallHandle)
	if err != nil {
		log.Fatal(err) // e.g. client: recall to broker-a (10.0.0.5:10911): CODE 604 ILLEGAL_OPERATION: recall failed, timestamp invalid
	}
	fmt.Println("recalled", id)
}

func ExamplePushConsumer() {
	cfg := client.DefaultPushConsumerConfig()
	cfg.Client.NameServerAddrs = []string{"127.0.0.1:9876"}
	cfg.Group = "billing"
	cfg.ConsumeFrom = client.ConsumeFromFirstOffset
	cfg.Concurrently = func(ctx context.Context, msgs []*client.MessageExt) client.ConsumeResult {
		for _, m := range msgs {
			fmt.Println(m.Topic, m.Tags(), string(m.Body))
		}
		return client.ConsumeSuccess // or ConsumeRetryLater: redelivered through %RETRY%billing
	}
	c, err := client.NewPushConsumer(cfg)
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Subscribe("Orders", "created || paid"); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		log.Fatal(err)
	}
	time.Sleep(time.Minute)
	// Shutdown persists every consumed offset before it returns.
	shutdownCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.Shutdown(shutdownCtx); err != nil {
		log.Print(err)
	}
}

// A consumer that receives only the messages whose properties match a
// SQL92 condition; the broker evaluates it (RocketMQ brokers need
// enablePropertyFilter=true). TAGS is the tag.
func ExamplePushConsumer_SubscribeSelector() {
	cfg := client.DefaultPushConsumerConfig()
	cfg.Client.NameServerAddrs = []string{"127.0.0.1:9876"}
	cfg.Group = "eu-large-orders"
	cfg.Concurrently = func(ctx context.Context, msgs []*client.MessageExt) client.ConsumeResult {
		for _, m := range msgs {
			fmt.Println(m.Properties["region"], m.Properties["amount"], string(m.Body))
		}
		return client.ConsumeSuccess
	}
	c, err := client.NewPushConsumer(cfg)
	if err != nil {
		log.Fatal(err)
	}
	sel := client.SQL92Selector("region = 'eu' AND amount > 100 AND TAGS IN ('created', 'paid')")
	if err := c.SubscribeSelector("Orders", sel); err != nil {
		log.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
}
