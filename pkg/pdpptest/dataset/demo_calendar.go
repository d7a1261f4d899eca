package dataset

import (
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Calendar: recurring work meetings, customer calls, climbing and running,
// dinners with friends, trips and the launch. The people invited are the ones in
// mail and chat; who they are is the calendar_attendees stream, which the client
// grant withholds.

type demoEvent struct {
	id, calendar, title, desc string
	location, zone, status    string
	conf                      string
	start, end                time.Time
	allDay, recurring         bool
	organizer                 person
	attendees                 []person // organizer first
}

type calGen struct {
	r      *rand.Rand
	p      *prose
	events []*demoEvent
}

const pacificZone = "America/Los_Angeles"

func (c *calGen) add(e *demoEvent) {
	if e.id == "" {
		e.id = "evt_" + randHex(c.r, 16)
	}
	if e.zone == "" {
		e.zone = pacificZone
	}
	if e.status == "" {
		e.status = "confirmed"
		if !e.allDay && c.r.IntN(33) == 0 {
			e.status = "cancelled"
		} else if e.calendar == "Personal" && c.r.IntN(12) == 0 {
			e.status = "tentative"
		}
	}
	c.events = append(c.events, e)
}

// series adds one instance of a recurring event on every day from..to that on
// accepts, with Google-style instance ids (series id + date).
func (c *calGen) series(proto demoEvent, from, to localDay, hh, mm, minutes int, on func(localDay) bool, desc func() string) {
	base := "evt_" + randHex(c.r, 12)
	for d := from; d.key() <= to.key(); d = d.addDays(1) {
		if !on(d) || tripOn(d) != nil {
			continue
		}
		e := proto
		e.id = base + "_" + strings.ReplaceAll(d.String(), "-", "")
		e.start = d.at(hh, mm)
		e.end = e.start.Add(time.Duration(minutes) * time.Minute)
		e.recurring = true
		if desc != nil {
			e.desc = desc()
		}
		c.add(&e)
	}
}

func allDay(d localDay, days int) (time.Time, time.Time) {
	return d.at(0, 0), d.addDays(days).at(0, 0)
}

func (g *demoGen) calendar() map[string][]Record {
	r := demoRand(randCalendar)
	c := &calGen{r: r, p: &prose{r: r}}
	p := c.p
	first, horizon := dayOf(demoStart), dayOf(demoNow).addDays(30)
	people := func(firsts ...string) []person {
		ps := []person{}
		for _, f := range firsts {
			ps = append(ps, coworker(f))
		}
		return ps
	}
	weekday := func(days ...time.Weekday) func(localDay) bool {
		return func(d localDay) bool { return slices.Contains(days, d.weekday()) }
	}
	meet := func(name string) string { return "https://meet.tidewaterlabs.example/" + slug(name) }

	grace, hannah, marcus := coworker("Grace"), coworker("Hannah"), coworker("Marcus")
	atlasTeam := append([]person{grace, ownerWork}, people("Dev", "Hannah", "Tomás", "Ines", "Sam")...)
	c.series(demoEvent{calendar: "Work", title: "Atlas standup", organizer: grace, attendees: atlasTeam, conf: meet("atlas standup"),
		desc: "Fifteen minutes: yesterday, today, blockers. Details go in #atlas-launch."},
		localDay{2026, time.January, 12}, localDay{2026, time.September, 25}, 9, 30, 15, weekday(time.Monday, time.Wednesday, time.Friday), nil)
	c.series(demoEvent{calendar: "Work", title: "Nora / Grace 1:1", organizer: grace, attendees: []person{grace, ownerWork}, conf: meet("nora grace")},
		first, horizon, 14, 0, 30, weekday(time.Thursday), func() string {
			if r.IntN(3) > 0 {
				return ""
			}
			return "Topics: " + p.sentence(workPlanning)
		})
	c.series(demoEvent{calendar: "Work", title: "Design critique", organizer: hannah, location: "Studio room",
		attendees: append([]person{hannah, ownerWork}, people("Yuki", "Grace", "Sam")...)},
		first, horizon, 11, 0, 60, func(d localDay) bool { return d.weekday() == time.Tuesday && d.d%14 < 7 }, func() string {
			p.focus()
			return p.fill("Bring work in progress. This week: {feature}.")
		})
	c.series(demoEvent{calendar: "Work", title: "All-hands", organizer: marcus, location: "Big room and video", conf: meet("all hands"),
		attendees: append([]person{marcus, ownerWork}, slices.DeleteFunc(slices.Clone(coworkers), func(x person) bool { return x == marcus })...),
		desc:      "Company update, launches, new faces, questions from the doc."},
		first, horizon, 16, 0, 45, func(d localDay) bool { return d.weekday() == time.Monday && d.d <= 7 }, nil)
	c.series(demoEvent{calendar: "Work", title: "Harborview pilot weekly", organizer: coworker("Leila"),
		attendees: []person{coworker("Leila"), ownerWork, clients[0], coworker("Felix")}, conf: meet("harborview weekly")},
		localDay{2026, time.May, 6}, horizon, 10, 0, 30, weekday(time.Wednesday), func() string {
			p.topic = map[string]string{"customer": "Harborview Health", "feature": p.pick(vocab["feature"])}
			return "Pilot check-in with Amara's team. " + p.sentence(workCustomer)
		})
	c.series(demoEvent{calendar: "Personal", title: "Climbing with Ben", organizer: ownerPersonal, location: "Summit Climbing Gym",
		attendees: []person{ownerPersonal, friends[3]}, desc: "Bouldering first, then ropes if the arms still work."},
		first, horizon, 18, 30, 120, func(d localDay) bool { return d.weekday() == time.Tuesday && r.IntN(10) < 7 }, nil)
	c.series(demoEvent{calendar: "Personal", title: "Trailhead long run", organizer: person{"Trailhead Running Club", "news@trailheadrunning.example"},
		location: "Hawthorne Bridge, east end", attendees: []person{{"Trailhead Running Club", "news@trailheadrunning.example"}, ownerPersonal},
		desc: "Waterfront loop, three pace groups. Coffee afterwards."},
		first, horizon, 8, 0, 90, func(d localDay) bool { return d.weekday() == time.Saturday && d.d%14 >= 7 }, nil)

	// Customer calls.
	for i := 0; i < 22; i++ {
		feature, customer, _ := p.focus()
		contact := clients[r.IntN(len(clients))]
		d := workday(randomDay(r, demoStart, demoNow.AddDate(0, 0, 20)))
		start := d.at(9+r.IntN(7), 30*r.IntN(2))
		c.add(&demoEvent{calendar: "Work", title: "Call with " + customer, organizer: coworker("Felix"),
			attendees: []person{coworker("Felix"), ownerWork, contact}, conf: meet("call " + customer),
			desc:  p.fill("Agenda: their feedback on " + feature + ", timeline, open questions. " + p.sentence(workCustomer)),
			start: start, end: start.Add(45 * time.Minute)})
	}
	// Dinners and weekends with friends.
	for i := 0; i < 34; i++ {
		f := friends[r.IntN(len(friends))]
		place := p.pick(vocab["restaurant"])
		d := randomDay(r, demoStart, demoNow.AddDate(0, 0, 25))
		if tripOn(d) != nil {
			continue
		}
		start := d.at(18+r.IntN(2), 30*r.IntN(2))
		desc := []string{"", "", "Booked under Castellanos.", "Table for two, by the window if they have it.",
			"My turn to pay.", "Bring the book I borrowed."}[r.IntN(6)]
		c.add(&demoEvent{calendar: "Personal", title: "Dinner with " + f.first(), organizer: ownerPersonal, location: place,
			attendees: []person{ownerPersonal, f}, desc: desc, start: start, end: start.Add(2 * time.Hour)})
	}
	// One-off days that anchor the story.
	dentist := person{"Willamette Dental", "appointments@willamettedental.example"}
	for _, d := range []localDay{{2025, time.August, 12}, {2026, time.February, 17}, {2026, time.August, 18}} {
		start := d.at(8, 30)
		c.add(&demoEvent{calendar: "Personal", title: "Dentist: cleaning", organizer: dentist, location: "Willamette Dental, 1520 SE Hawthorne Blvd",
			attendees: []person{dentist, ownerPersonal}, desc: "Cleaning and check-up. Bring the new insurance card.", start: start, end: start.Add(time.Hour)})
	}
	for _, t := range demoTrips {
		// An all-day event spans midnight to midnight where it happens.
		start := time.Date(t.from.y, t.from.m, t.from.d, -t.utcOffset, 0, 0, 0, time.UTC)
		end := start.AddDate(0, 0, t.to.daysSince(t.from)+1)
		c.add(&demoEvent{calendar: "Travel", title: "Trip: " + t.city, organizer: ownerPersonal, attendees: []person{ownerPersonal},
			location: t.city, zone: t.zone, allDay: true, start: start, end: end, status: "confirmed", desc: t.note})
		if t.flight.code != "" {
			dep := t.from.at(11, 5)
			c.add(&demoEvent{calendar: "Travel", title: "Flight " + t.flight.code + " " + t.flight.route, organizer: ownerPersonal,
				attendees: []person{ownerPersonal}, location: "Portland International Airport (PDX)", start: dep, end: dep.Add(10*time.Hour + 40*time.Minute),
				status: "confirmed", desc: "Cascadia Air. Itinerary in Personal Mail."})
		}
	}
	for _, e := range []struct {
		title, desc, location, cal string
		from                       localDay
		days                       int
	}{
		{"Design Systems London", "Conference. Talks on tokens and theming on day two.", "Barbican Centre, London", "Work", localDay{2025, time.September, 17}, 3},
		{"Atlas launch 🚀", "Launch day. War room in #atlas-launch.", "", "Work", localDay{2026, time.September, 15}, 1},
		{"Team offsite", "Cedar Hollow Lodge. Bus from the office at 8:00.", "Cedar Hollow Lodge, Mt. Hood", "Work", localDay{2026, time.October, 14}, 2},
		{"Mateo's birthday", "", "", "Personal", localDay{2026, time.February, 3}, 1},
		{"Mom's birthday", "Call in the morning, she gets up early.", "", "Personal", localDay{2025, time.August, 22}, 1},
		{"Mom's birthday", "Call in the morning, she gets up early.", "", "Personal", localDay{2026, time.August, 22}, 1},
		{"Priya's birthday", "", "", "Personal", localDay{2026, time.May, 29}, 1},
		{"Ben's birthday", "", "", "Personal", localDay{2025, time.December, 7}, 1},
		{"Thanksgiving in Sacramento", "Drive down Wednesday night.", "Sacramento", "Personal", localDay{2025, time.November, 27}, 2},
	} {
		start, end := allDay(e.from, e.days)
		owner := ownerPersonal
		if e.cal == "Work" {
			owner = ownerWork
		}
		c.add(&demoEvent{calendar: e.cal, title: e.title, desc: e.desc, location: e.location, organizer: owner, attendees: []person{owner},
			allDay: true, start: start, end: end, status: "confirmed"})
	}
	retro := localDay{2026, time.September, 18}.at(14, 0)
	c.add(&demoEvent{calendar: "Work", title: "Atlas launch retro", organizer: grace,
		attendees: append(slices.Clone(atlasTeam), coworker("Leila"), marcus, coworker("Yuki")), conf: meet("atlas retro"),
		desc:  "Blameless retrospective of the Atlas launch. Grace records and shares the transcript afterwards.",
		start: retro, end: retro.Add(90 * time.Minute), status: "confirmed"})
	p.topic = nil

	slices.SortStableFunc(c.events, func(a, b *demoEvent) int {
		if x := a.start.Compare(b.start); x != 0 {
			return x
		}
		return strings.Compare(a.id, b.id)
	})
	return g.calendarRecords(r, c.events)
}

// daysSince counts the days from d0 to d.
func (d localDay) daysSince(d0 localDay) int {
	a := time.Date(d0.y, d0.m, d0.d, 12, 0, 0, 0, time.UTC)
	b := time.Date(d.y, d.m, d.d, 12, 0, 0, 0, time.UTC)
	return int(b.Sub(a).Hours() / 24)
}

func (g *demoGen) calendarRecords(r *rand.Rand, events []*demoEvent) map[string][]Record {
	o, a := &g.obj, &g.arena
	out := map[string][]Record{}
	responses := []string{"accepted", "accepted", "accepted", "accepted", "accepted", "accepted", "tentative", "declined", "needs_action"}
	for _, e := range events {
		emitted := minTime(e.start.Add(-72*time.Hour), demoSync)
		o.begin()
		o.str("id", e.id)
		o.str("calendar", e.calendar)
		o.str("title", e.title)
		o.optStr("description", e.desc)
		o.optStr("location", e.location)
		o.time("start_at", e.start)
		o.time("end_at", e.end)
		o.bool("all_day", e.allDay)
		o.str("time_zone", e.zone)
		o.str("status", e.status)
		o.str("organizer_email", e.organizer.email)
		o.int("attendee_count", len(e.attendees))
		o.int("duration_minutes", int(e.end.Sub(e.start).Minutes()))
		o.bool("is_recurring", e.recurring)
		o.optStr("conference_url", e.conf)
		out["calendar_events"] = append(out["calendar_events"], record(e.id, emitted, o.end(a)))

		if len(e.attendees) < 2 {
			continue // a note to self has no guest list
		}
		for i, who := range e.attendees {
			resp := "accepted"
			switch {
			case i == 0 || who == ownerWork || who == ownerPersonal:
			case e.start.After(demoNow) && r.IntN(3) == 0:
				resp = "needs_action"
			default:
				resp = responses[r.IntN(len(responses))]
			}
			o.begin()
			o.str("event_id", e.id)
			o.str("email", who.email)
			o.str("name", who.name)
			o.str("response_status", resp)
			o.bool("is_organizer", i == 0)
			o.bool("is_optional", i > 2 && r.IntN(6) == 0)
			out["calendar_attendees"] = append(out["calendar_attendees"], record(compoundKey(e.id, who.email), demoSync, o.end(a)))
		}
	}
	return out
}
