package dataset

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// Team chat: the Tidewater Labs workspace. Most messages are one-liners; a few
// in every channel are long posts (weekly updates, incident write-ups, call
// notes, design proposals) of several paragraphs.

type demoChannel struct {
	id, name, topic, kind string
	members               []person
	created               time.Time
	archivedAt            time.Time // zero while active
	weight                int
	long                  []string // sentence pool of long posts; nil for none
	opener                []string
}

type chatMsg struct {
	id      string
	ch      *demoChannel
	author  person
	at      time.Time
	text    string
	parent  *chatMsg
	replies int
	edited  time.Time
	reacts  []chatReaction
	deleted bool
}

type chatReaction struct {
	emoji string
	count int
}

func demoChannels(r *rand.Rand) []*demoChannel {
	all := append([]person{ownerWork}, coworkers...)
	pick := func(firsts ...string) []person {
		ps := []person{ownerWork}
		for _, f := range firsts {
			ps = append(ps, coworker(f))
		}
		return ps
	}
	chID := func(prefix string) string { return prefix + strings.ToUpper(randHex(r, 10)) }
	return []*demoChannel{
		{id: chID("C"), name: "general", topic: "Company-wide announcements and questions", kind: "public", members: all,
			created: demoStart.AddDate(-3, 0, 0), weight: 12, long: workPlanning,
			opener: []string{"A few announcements for the week, long one.", "Some thoughts on the next quarter, please read when you have ten minutes."}},
		{id: chID("C"), name: "design", topic: "Critiques, mocks and the design system refresh", kind: "public",
			members: pick("Hannah", "Yuki", "Grace", "Dev", "Sam"), created: demoStart.AddDate(-2, 0, 0), weight: 18, long: workDesign,
			opener: []string{"Design proposal for {feature}. Long post, grab a coffee.", "Research readout on {feature}, the short-ish version."}},
		{id: chID("C"), name: "atlas-launch", topic: "Atlas ships September 15. Checklist pinned.", kind: "private",
			members: pick("Grace", "Dev", "Hannah", "Tomás", "Ines", "Sam", "Leila", "Marcus"),
			created: time.Date(2026, 1, 12, 17, 0, 0, 0, time.UTC), weight: 20, long: workUpdate,
			opener: []string{"Weekly Atlas update.", "Where we are with {feature}, and what I need from you."}},
		{id: chID("C"), name: "platform", topic: "Infrastructure, deploys and on-call", kind: "public",
			members: pick("Dev", "Tomás", "Ines", "Sam"), created: demoStart.AddDate(-2, 0, 0), weight: 10, long: workIncident,
			opener: []string{"Write-up of yesterday's slowdown in {system}.", "Notes from the on-call handover."}},
		{id: chID("C"), name: "incidents", topic: "Active incidents only. Post updates in threads.", kind: "public", members: all,
			created: demoStart.AddDate(-2, 0, 0), weight: 4, long: workIncident,
			opener: []string{"Incident summary: errors in {system} this morning.", "Postmortem draft: the outage of {system}."}},
		{id: chID("C"), name: "customer-harborview", topic: "Shared with Harborview Health. Be kind, they can read this.", kind: "private",
			members: append(pick("Felix", "Leila", "Grace"), clients[0]), created: time.Date(2026, 4, 20, 16, 0, 0, 0, time.UTC),
			weight: 7, long: workCustomer, opener: []string{"Notes from today's call, long one, sorry.", "Summary of where the pilot stands."}},
		{id: chID("C"), name: "random", topic: "Dogs, lunch, weekend plans", kind: "public", members: all,
			created: demoStart.AddDate(-3, 0, 0), weight: 8},
		{id: chID("C"), name: "offsite-2025", topic: "Planning the October offsite", kind: "private",
			members: pick("Grace", "Marcus", "Owen", "Rachel"), created: time.Date(2025, 8, 25, 17, 0, 0, 0, time.UTC),
			archivedAt: time.Date(2025, 10, 24, 23, 0, 0, 0, time.UTC), weight: 3},
		{id: chID("D"), name: "Dev Malhotra", kind: "direct", members: pick("Dev"), created: demoStart.AddDate(-2, 0, 0), weight: 6},
		{id: chID("D"), name: "Grace Oyelaran", kind: "direct", members: pick("Grace"), created: demoStart.AddDate(-2, 0, 0), weight: 6},
		{id: chID("D"), name: "Hannah Kowalczyk", kind: "direct", members: pick("Hannah"), created: demoStart.AddDate(-2, 0, 0), weight: 5},
	}
}

var chatReactions = []string{"thumbsup", "tada", "eyes", "heart", "raised_hands", "white_check_mark", "joy", "pray"}

var chatExtra = []string{
	"Shipped {feature} to everyone 🎉",
	"Coffee is on me today ☕",
	"Weekend was great, finally made it up {trail} 🥾",
	"That graph is beautiful 📈",
}

var chatClosers = []string{"Questions in the thread please!", "Happy to talk through any of this live.", "Thanks all.",
	"Comments welcome, especially the disagreeing kind.", "More next week."}

func (g *demoGen) chat() map[string][]Record {
	r := demoRand(randChat)
	p := &prose{r: r}
	channels := demoChannels(r)
	total := 0
	for _, c := range channels {
		total += c.weight
	}

	const count = 1250
	msgs := make([]*chatMsg, 0, count)
	for len(msgs) < count {
		w := r.IntN(total)
		var ch *demoChannel
		for _, c := range channels {
			if w < c.weight {
				ch = c
				break
			}
			w -= c.weight
		}
		from := ch.created
		if from.Before(demoStart) {
			from = demoStart
		}
		to := demoNow
		if !ch.archivedAt.IsZero() {
			to = ch.archivedAt
		}
		at := workTime(r, randomDay(r, from, to))
		if at.After(to) || at.Before(from) {
			continue
		}
		msgs = append(msgs, &chatMsg{ch: ch, at: at})
	}
	slices.SortStableFunc(msgs, func(a, b *chatMsg) int { return a.at.Compare(b.at) })

	// Write texts in time order, so a reply can quote a recent parent.
	recent := map[string][]*chatMsg{}
	for _, m := range msgs {
		m.id = "msg_" + randHex(r, 18)
		m.author = m.ch.members[r.IntN(len(m.ch.members))]
		if r.IntN(10) < 3 {
			m.author = ownerWork
		}
		p.focus()
		if m.ch.name == "customer-harborview" {
			p.topic["customer"] = "Harborview Health"
		}
		if prev := recent[m.ch.id]; len(prev) > 0 && r.IntN(4) == 0 {
			parent := prev[r.IntN(len(prev))]
			for parent.parent != nil {
				parent = parent.parent
			}
			m.parent = parent
			parent.replies++
			m.at = parent.at.Add(time.Duration(2+r.IntN(90)) * time.Minute)
			m.at = minTime(m.at, demoNow.Add(-time.Minute))
		}
		roll := r.IntN(100)
		switch {
		case m.parent != nil && roll < 70:
			m.text = p.sentence(chatReplies)
		case m.ch.long != nil && roll < 9:
			m.text = g.longPost(r, p, m.ch)
		case m.ch.long != nil && roll < 50:
			m.text = p.paragraph(m.ch.long, 1+r.IntN(2))
		case m.ch.kind == "direct" && roll < 60:
			m.text = p.sentence(dmLines)
		case m.ch.name == "random" && roll < 70:
			m.text = p.sentence(randomLines)
		case roll < 5:
			m.text = p.sentence(chatExtra)
		default:
			m.text = p.sentence(chatShort)
		}
		if r.IntN(12) == 0 {
			m.edited = minTime(m.at.Add(time.Duration(1+r.IntN(30))*time.Minute), demoNow)
		}
		for j, n := 0, r.IntN(3); j < n && r.IntN(3) == 0; j++ {
			m.reacts = append(m.reacts, chatReaction{chatReactions[r.IntN(len(chatReactions))], 1 + r.IntN(5)})
		}
		recent[m.ch.id] = append(recent[m.ch.id], m)
		if len(recent[m.ch.id]) > 8 {
			recent[m.ch.id] = recent[m.ch.id][1:]
		}
	}
	p.topic = nil
	// Nora deleted three of her messages; their tombstones stay in the feed.
	for _, from := range []int{count / 4, count / 2, count * 3 / 4} {
		for _, m := range msgs[from:] {
			if m.author == ownerWork && m.parent == nil && m.replies == 0 {
				m.deleted = true
				break
			}
		}
	}
	slices.SortStableFunc(msgs, func(a, b *chatMsg) int { return a.at.Compare(b.at) })
	return g.chatRecords(channels, msgs)
}

// longPost writes a multi-paragraph post: an opener, three to six paragraphs of
// the channel's theme, sometimes a bullet list, and a closing line. No sentence
// template is used twice in one post.
func (g *demoGen) longPost(r *rand.Rand, p *prose, ch *demoChannel) string {
	var b strings.Builder
	b.WriteString(p.sentence(ch.opener))
	d := p.deck(ch.long)
	n := 3 + r.IntN(4)
	for i := 0; i < n && d.left() >= 3; i++ {
		b.WriteString("\n\n")
		if i == n/2 && r.IntN(2) == 0 {
			for j, k := 0, 3+r.IntN(2); j < k; j++ {
				if j > 0 {
					b.WriteByte('\n')
				}
				b.WriteString("- ")
				b.WriteString(p.fill(d.draw()))
			}
			continue
		}
		for j, k := 0, min(3+r.IntN(3), d.left()); j < k; j++ {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(p.fill(d.draw()))
		}
	}
	b.WriteString("\n\n")
	b.WriteString(chatClosers[r.IntN(len(chatClosers))])
	return b.String()
}

func (g *demoGen) chatRecords(channels []*demoChannel, msgs []*chatMsg) map[string][]Record {
	o, a := &g.obj, &g.arena
	out := map[string][]Record{}
	counts := map[string]int{}
	for _, m := range msgs {
		emitted := minTime(maxTime(m.at, m.edited).Add(3*time.Minute), demoNow)
		if m.deleted {
			gone := minTime(m.at.Add(40*time.Minute), demoNow)
			out["chat_messages"] = append(out["chat_messages"], Record{Key: m.id, EmittedAt: ts(gone), Deleted: true, DeletedAt: ts(gone)})
			continue
		}
		counts[m.ch.id]++
		o.begin()
		o.str("id", m.id)
		o.str("channel_id", m.ch.id)
		o.str("channel_name", m.ch.name)
		o.str("author_name", m.author.name)
		o.str("author_email", m.author.email)
		o.str("text", m.text)
		o.time("sent_at", m.at)
		if m.edited.IsZero() {
			o.null("edited_at")
		} else {
			o.time("edited_at", m.edited)
		}
		if m.parent != nil {
			o.str("thread_parent_id", m.parent.id)
		} else {
			o.null("thread_parent_id")
		}
		o.int("reply_count", m.replies)
		o.key("reactions")
		o.b = append(o.b, '[')
		for i, re := range m.reacts {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = append(o.b, `{"emoji":`...)
			o.b = jsonw.AppendString(o.b, re.emoji)
			o.b = append(o.b, `,"count":`...)
			o.b = strconv.AppendInt(o.b, int64(re.count), 10)
			o.b = append(o.b, '}')
		}
		o.b = append(o.b, ']')
		o.strs("mentions", mentions(m.text, m.author))
		o.int("char_count", utf8.RuneCountInString(m.text))
		out["chat_messages"] = append(out["chat_messages"], record(m.id, emitted, o.end(a)))
	}
	for _, ch := range channels {
		o.begin()
		o.str("id", ch.id)
		o.str("name", ch.name)
		o.optStr("topic", ch.topic)
		o.str("kind", ch.kind)
		o.strs("member_emails", emails(ch.members))
		o.int("member_count", len(ch.members))
		o.time("created_at", ch.created)
		o.bool("is_archived", !ch.archivedAt.IsZero())
		o.int("message_count", counts[ch.id])
		out["chat_channels"] = append(out["chat_channels"], record(ch.id, demoSync, o.end(a)))
	}
	return out
}

// mentions lists the coworkers a message names, by address, in coworker order.
func mentions(text string, author person) []string {
	out := []string{}
	for _, c := range coworkers {
		if c != author && strings.Contains(text, c.first()) {
			out = append(out, c.email)
		}
	}
	return out
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
