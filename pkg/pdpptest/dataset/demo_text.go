package dataset

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// prose assembles conversational text from sentence templates. A template holds
// {slot} markers filled from the vocabularies below; a slot whose name starts
// with a capital letter gets its value capitalised (sentence starts). Everything
// is drawn from one seeded generator, so the text is the same on every run.
type prose struct {
	r *rand.Rand
	b []byte // scratch
	// topic pins slots to one value for a while ("feature", "customer",
	// "system"), so a thread keeps talking about the same thing.
	topic map[string]string
}

// focus pins the topic slots to fresh picks and returns them for subjects.
func (p *prose) focus() (feature, customer, system string) {
	if p.topic == nil {
		p.topic = make(map[string]string, 4)
	}
	clear(p.topic)
	p.topic["feature"] = p.pick(vocab["feature"])
	p.topic["customer"] = p.pick(vocab["customer"])
	p.topic["system"] = p.pick(vocab["system"])
	return p.topic["feature"], p.topic["customer"], p.topic["system"]
}

func (p *prose) pick(xs []string) string { return xs[p.r.IntN(len(xs))] }

// sentence expands one template chosen from pool.
func (p *prose) sentence(pool []string) string {
	p.b = p.expand(p.b[:0], p.pick(pool))
	return string(p.b)
}

// fill expands one given template.
func (p *prose) fill(tmpl string) string {
	p.b = p.expand(p.b[:0], tmpl)
	return string(p.b)
}

// paragraph joins n distinct sentences of pool (fewer when the pool is small).
func (p *prose) paragraph(pool []string, n int) string {
	return p.paragraphs(pool, n)[0]
}

// paragraphs writes several paragraphs at once without repeating a template
// anywhere in the text. When the pool runs out, the later paragraphs come out
// shorter or are dropped.
func (p *prose) paragraphs(pool []string, sizes ...int) []string {
	d := p.deck(pool)
	out := make([]string, 0, len(sizes))
	for _, n := range sizes {
		n = min(n, d.left())
		if n <= 0 {
			break
		}
		p.b = p.b[:0]
		for i := 0; i < n; i++ {
			if i > 0 {
				p.b = append(p.b, ' ')
			}
			p.b = p.expand(p.b, d.draw())
		}
		out = append(out, string(p.b))
	}
	return out
}

// deck deals the templates of a pool in a random order, so a long text goes
// through all of them before it repeats one.
type deck struct {
	r     *rand.Rand
	pool  []string
	order []int
}

func (p *prose) deck(pool []string) *deck { return &deck{r: p.r, pool: pool} }

func (d *deck) left() int {
	if d.order == nil {
		return len(d.pool)
	}
	return len(d.order)
}

// draw returns the next template, reshuffling once the pool is used up.
func (d *deck) draw() string {
	if len(d.order) == 0 {
		d.order = d.r.Perm(len(d.pool))
	}
	t := d.pool[d.order[0]]
	d.order = d.order[1:]
	return t
}

// expand appends tmpl with its slots filled.
func (p *prose) expand(b []byte, tmpl string) []byte {
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			return append(b, tmpl...)
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			return append(b, tmpl...)
		}
		b = append(b, tmpl[:i]...)
		b = p.slot(b, tmpl[i+1:i+j])
		tmpl = tmpl[i+j+1:]
	}
}

func (p *prose) slot(b []byte, name string) []byte {
	capital := name[0] >= 'A' && name[0] <= 'Z'
	if capital {
		name = strings.ToLower(name[:1]) + name[1:]
	}
	start := len(b)
	if v, ok := p.topic[name]; ok {
		b = append(b, v...)
	} else {
		b = p.value(b, name)
	}
	if capital && len(b) > start && b[start] >= 'a' && b[start] <= 'z' {
		b[start] -= 'a' - 'A'
	}
	return b
}

// value appends a fresh pick for the slot name.
func (p *prose) value(b []byte, name string) []byte {
	switch name {
	case "pct":
		b = strconv.AppendInt(b, int64(5+p.r.IntN(90)), 10)
	case "n":
		b = strconv.AppendInt(b, int64(2+p.r.IntN(11)), 10)
	case "big":
		b = strconv.AppendInt(b, int64(120+p.r.IntN(4800)), 10)
	case "ms":
		b = strconv.AppendInt(b, int64(120+p.r.IntN(780)), 10)
	case "hour":
		b = strconv.AppendInt(b, int64(1+p.r.IntN(12)), 10)
		b = append(b, p.pick(quarterHours)...)
	case "person":
		b = append(b, coworkers[p.r.IntN(len(coworkers))].name...)
	case "first":
		b = append(b, coworkers[p.r.IntN(len(coworkers))].first()...)
	case "friend":
		b = append(b, friends[p.r.IntN(len(friends))].first()...)
	default:
		words, ok := vocab[name]
		if !ok {
			panic("demo prose: unknown slot {" + name + "}") // a typo in a template; caught by the tests
		}
		b = append(b, p.pick(words)...)
	}
	return b
}

var quarterHours = []string{":00", ":15", ":30", ":45"}

// vocab holds the word lists behind the {slot} markers.
var vocab = map[string][]string{
	"feature": {
		"the export wizard", "the onboarding checklist", "usage-based billing", "the audit log",
		"SSO setup", "the dashboard filters", "offline mode on mobile", "the data retention settings",
		"the pricing page", "role-based access", "the CSV importer", "saved views", "the weekly digest email",
		"the Atlas workspace switcher", "scheduled reports", "the notification center", "the share dialog",
		"the empty states", "the admin console", "two-factor enrollment",
	},
	"system": {
		"the ingest pipeline", "the Postgres read replica", "the nightly backfill", "the staging cluster",
		"the feature flag service", "the billing webhook", "the search indexer", "the job queue",
		"the auth proxy", "the event collector", "the metrics warehouse", "the image resizer",
	},
	"metric": {
		"p95 latency", "trial-to-paid conversion", "weekly active teams", "activation", "the error rate",
		"time to first dashboard", "support ticket volume", "churn in the SMB segment", "NPS",
		"the import success rate", "seat expansion", "the crash-free session rate",
	},
	"customer": {
		"Harborview Health", "Cedar & Pine Outfitters", "Bluefin Logistics", "Meridian Schools",
		"Copperline Energy", "Foxglove Studios", "Alder County Library",
	},
	"when": {
		"tomorrow", "by Friday", "next sprint", "before the end of the month", "after the offsite",
		"early next week", "before code freeze", "by Thursday afternoon", "this week",
	},
	"day":  {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"},
	"team": {"design", "platform", "growth", "support", "data", "mobile", "security"},
	"doc": {
		"the one-pager", "the RFC", "the Figma file", "the launch checklist", "the runbook",
		"the research readout", "the migration plan", "the pricing memo", "the roadmap doc",
	},
	"tool": {"Figma", "the staging environment", "the analytics dashboard", "the bug tracker", "the shared drive"},
	"restaurant": {
		"Koji Ramen Bar", "Luca's Trattoria", "La Taqueria Azul", "Thai Orchid Kitchen", "Little Fig Bistro",
		"the dumpling place on Division", "Saffron & Vine", "Harbor Oyster House",
	},
	"neighborhood": {"Division Street", "the Pearl", "Alberta Arts", "Sellwood", "Mississippi Avenue", "Hawthorne", "St. Johns"},
	"dish":         {"the mushroom ramen", "the green curry", "tamales", "the lemon tart", "paella", "the dumplings", "a huge pot of chili"},
	"book": {
		"The Overstory", "Piranesi", "Tomorrow, and Tomorrow, and Tomorrow", "Braiding Sweetgrass",
		"A Gentleman in Moscow", "The Dispossessed", "Station Eleven", "Klara and the Sun",
	},
	"trail": {
		"Dog Mountain", "Angel's Rest", "the Wildwood Trail", "Smith Rock", "Mirror Lake", "Eagle Creek",
		"Multnomah Falls loop", "Saddle Mountain",
	},
	"city": {"Lisbon", "London", "Vancouver", "Sacramento", "Seattle", "Bend", "Porto"},
	"thing": {
		"the bike", "my old tent", "the slow cooker", "the good umbrella", "the camping stove",
		"your Dutch oven", "the board game with the trains", "the spare key",
	},
	"cafe":      {"Morning Tide", "Pearl Roasters", "the cart on the corner", "the place downstairs"},
	"evening":   {"6:30", "7:00", "7:15", "7:30", "8:00"},
	"morning":   {"7:00", "7:30", "8:00", "8:30"},
	"worktime":  {"9:30", "10:00", "11:00", "11:30", "1:30", "2:00", "3:30", "4:00"},
	"afternoon": {"2:30", "3:00", "3:30", "4:00", "4:30"},
	"weather":   {"rain", "sunshine", "wind", "fog", "a heat wave", "snow in the pass"},
}

// Sentence pools by theme. Each reads as something a person would actually write.
var (
	workUpdate = []string{
		"Quick update on {feature}: the backend work is done and {first} is wiring up the last two screens.",
		"We are on track to ship {feature} {when}, assuming the review on {day} goes the way I expect.",
		"{Metric} moved from {pct}% to {pct}% since we turned on {feature}; the trend is noisy, so I would not celebrate yet.",
		"I paired with {first} on {feature} this morning and we found two edge cases nobody had written down.",
		"The remaining risk is {system}; if it misbehaves under load we may need another day of testing.",
		"I moved the open questions about {feature} to the bottom of {doc} so they stop blocking the rest.",
		"Support flagged {n} tickets about {feature} this week, mostly people who could not find the setting.",
		"{First} thinks we can cut scope on {feature} and still hit the date, and I am inclined to agree.",
		"We re-ran the load test against {system} and p95 stayed under {ms} ms the whole time.",
		"The beta group has {big} active teams now, up from about half that a month ago.",
		"I would rather ship a smaller version of {feature} {when} than wait three weeks for all of it.",
		"Design sign-off on {feature} is done; the copy still needs a pass from {first}.",
		"Engineering estimates for {feature} came back at {n} days, which is more than the plan assumed.",
		"{Person} asked whether {feature} works for {customer}, and the honest answer is not yet.",
		"I added a short demo video to {doc} so people can see the flow without setting up staging.",
		"The dependency on {system} is the only thing I am actually worried about right now.",
		"We agreed to keep {feature} behind a flag for the first {n} days and watch {metric} closely.",
		"Nothing is on fire, but {metric} dipped on {day} and I want to understand why before we ship more.",
		"If anyone has cycles {when}, the bug list for {feature} could use another pair of eyes.",
		"I wrote up the trade-offs in {doc}; the short version is that option two costs less and breaks less.",
		"The analytics for {feature} are live, so we will have real numbers by the end of next week.",
		"{First} found a much simpler way to handle {feature}, which removes about a week of work.",
	}
	workIncident = []string{
		"At around {hour} Pacific, {system} started timing out and alerts fired for roughly {n} minutes.",
		"The root cause was a migration that locked a large table while {system} was still writing to it.",
		"{First} rolled back the deploy, which brought error rates down within a few minutes.",
		"About {big} requests failed during the window; no data was lost, but some exports had to be retried.",
		"We did not page the right person at first because the on-call rotation still listed last month's schedule.",
		"The fix is already merged, and we added a check that refuses to run that kind of migration during business hours.",
		"Customer impact was limited to {customer} and a handful of trial accounts, and {first} has already written to them.",
		"Follow-ups are tracked in the incident doc: better alert thresholds, a runbook update, and a load test for {system}.",
		"In hindsight the warning signs were there on {day}, when p95 latency crept above {ms} ms for an hour.",
		"I want us to do a blameless review {when}; the process failed here, not any one person.",
		"The status page was updated twice, which is better than last time but still slower than it should be.",
		"We should also decide whether {system} needs its own dashboard instead of living in the shared one.",
		"Thanks to everyone who stayed late, and to {person} for writing the customer-facing summary so quickly.",
		"The alert that should have caught this was muted during last month's migration and never turned back on.",
		"Retries made things worse: every client backed off at the same moment and came back together.",
		"{First} noticed the spike in the dashboard before the pager went off, which bought us about ten minutes.",
		"We confirmed the blast radius by replaying the request logs; nothing outside {system} was affected.",
		"The runbook step for draining {system} was out of date, so we improvised, and it mostly worked.",
		"I am adding a synthetic check that exercises {system} every minute from two regions.",
		"Our status page said degraded performance while some customers saw outright errors, which we need to be more honest about.",
		"Error budgets for the quarter are now at {pct}%, so the next risky change needs a second reviewer.",
		"The on-call handover doc now has a section on {system}, written while the details are still fresh.",
	}
	workCustomer = []string{
		"Had a good call with {customer} today; they are happy overall but {feature} is a sore spot.",
		"Their admin, who runs about {big} seats, wants {feature} before they renew in the spring.",
		"They asked twice about data residency, so it is worth having an answer ready before the next call.",
		"The main complaint was that {feature} hides too much behind settings their users never open.",
		"{Customer} is evaluating a competitor, mainly on price, so the pricing memo matters here.",
		"They offered to join a research session with {first}, which is a great chance to test the new flow.",
		"Renewal looks likely if we can show progress on {feature} by the end of the quarter.",
		"Their IT team needs SSO and an audit trail before rolling us out to the rest of the organisation.",
		"I promised a follow-up {when} with a short written summary and the timeline we discussed.",
		"Usage at {customer} dropped about {pct}% in August, which lines up with their summer schedule.",
		"They loved the weekly digest and asked whether they can send it to people outside the workspace.",
		"I would like {first} on the next call so we stop relaying technical questions second-hand.",
		"Their champion is moving to a new role in January, so we need a second relationship there soon.",
		"They asked for a price for {big} seats on a three-year term, which I will send after talking to Marcus.",
		"The pilot group uses {feature} every day, but the wider team has not logged in for weeks.",
		"They are happy with support response times, and said so unprompted, which is rare.",
		"Security review on their side is the long pole; their questionnaire has over a hundred questions.",
		"I showed them the new dashboards and the reaction was immediate: they want them for their board meeting.",
		"They would pay for an on-premise option, but I do not think we should build one for a single customer.",
		"We promised a fix for the export timeouts by the end of the month, so that date matters.",
		"Their procurement team needs the invoice to reference a purchase order number from now on.",
		"Two of their regional offices are not using us at all, which is the real expansion opportunity.",
	}
	workDesign = []string{
		"I pushed a new round of mocks for {feature} to {tool}; the main change is a calmer empty state.",
		"The research sessions were clear: people expect {feature} to live next to search, not in settings.",
		"I tried three layouts for {feature}, and the simplest one tested best with almost every participant.",
		"We are still using four slightly different greys on that screen, which the design system refresh should fix.",
		"{First} made a good point that the primary button competes with the chart, so I toned it down.",
		"Accessibility review found contrast problems in the tooltip and a focus trap in the share dialog.",
		"The copy on {feature} is doing a lot of work; if we need two sentences to explain it, the design is wrong.",
		"I would love feedback on the mobile version before {day}, especially on the navigation.",
		"Hannah and I went through the component audit and we can retire about a third of the variants.",
		"The prototype is linked in {doc}; click through from the dashboard to see the whole flow.",
		"People kept missing the filter chips, so they are now above the table instead of in the sidebar.",
		"I am not attached to the illustrations; if they slow down the page we should drop them.",
		"Yuki's readout suggests admins and regular members want very different things from {feature}.",
		"The new icon set is in the library; please stop detaching instances to change stroke widths.",
		"Dark mode exposed every hard-coded colour we have, which is a good reason to finish the token migration.",
		"In testing, nobody understood the word workspace until we showed them the switcher.",
		"I would like us to stop designing for the empty state last; it is the first thing new teams see.",
		"The table component now handles long names without wrapping the whole row, finally.",
		"Mobile navigation tested better with a bottom bar than with the hamburger menu, by a wide margin.",
		"We spent a long time on the onboarding illustrations, and in the sessions nobody mentioned them.",
		"{First} suggested a progress indicator for imports, and it made the wait feel much shorter in testing.",
		"I made the error states less apologetic and more specific about what to do next.",
		"The settings page is now grouped by task rather than by feature, which reads much better.",
	}
	workPlanning = []string{
		"For next quarter I would like us to pick three bets, not seven, and actually finish them.",
		"My vote is to put {feature} first, because it unblocks {customer} and two other renewals.",
		"We keep underestimating work on {system}; let us add a buffer instead of pretending.",
		"Hiring is the real constraint: until the second {team} engineer starts, we cannot run two big projects.",
		"I drafted goals in {doc}; please comment by {day} so we can settle them at the offsite.",
		"If we drop the marketplace idea for now, the roadmap suddenly looks achievable.",
		"{Person} suggested we measure success by {metric}, which I like because it is hard to game.",
		"The budget for contractors is tighter than last year, so anything nice-to-have should move to Q2.",
		"We should write down what we are not doing, so nobody is surprised in three months.",
		"I want one week in every six reserved for cleanup, bugs and the boring work that makes launches smooth.",
		"The {team} team is already at capacity, so anything that needs them has to wait or replace something.",
		"Let us review progress every second {day} rather than adding another weekly meeting.",
		"I would like each bet to have one owner and one metric, written down before work starts.",
		"Support costs grew faster than revenue last quarter, which tells me onboarding needs attention.",
		"We said yes to too many custom requests this year; a few of them now cost us every release.",
		"The platform work is invisible to customers but it is what makes the next two launches possible.",
		"If {customer} renews, we can afford the second designer; if not, we revisit in March.",
		"I want fewer status meetings and more written updates that people can read when it suits them.",
		"Pricing changes should wait until we have three months of usage data from the new plans.",
		"Let us agree now what would make us stop a project, so the decision is not emotional later.",
		"We should celebrate finished work more visibly; launches get attention, cleanups never do.",
		"I am happy to cut my own project if it makes room for something more important.",
	}
	chatShort = []string{
		"Can someone review my PR for {feature} before lunch?",
		"Heads up: {system} is a bit slow this morning, looking into it.",
		"Running {n} minutes late to standup, start without me.",
		"Nice work on {feature}, that demo was great.",
		"Does anyone know who owns {system} these days?",
		"Deploy {n} of the day is out, watch the error dashboard for a bit.",
		"Coffee run to {cafe}, anyone? Leaving in ten.",
		"Moved the {day} sync to {worktime}, hope that works for everyone.",
		"I left comments in {doc}, mostly small stuff.",
		"Is staging down again or is it just me? {feature} will not load.",
		"Thanks {first}! That fixed it.",
		"Quick poll: should {feature} be on by default for new teams?",
		"Reminder that the all-hands is at {worktime} today.",
		"Lunch and learn on {feature} tomorrow, bring questions.",
		"Got it, I will take a look {when}.",
		"Ha, that is the third time this week {system} did that.",
		"{Customer} just signed the renewal!",
		"Pairing with {first} on {feature} this afternoon if anyone wants to join.",
		"I think the flaky test is in the suite for {feature}, not the API tests.",
		"Out this afternoon for a dentist appointment, back online around {afternoon}.",
		"Updated {doc} with the new timeline.",
		"Agree with {first}, let us keep it simple.",
		"Who broke the build? Just kidding, it was me, fix incoming.",
		"Can we push the review of {feature} to {day}? I need another day with the data.",
		"{Metric} is up {pct}% week over week, nice.",
		"Does anyone have the link to the {customer} call recording?",
		"Standup notes for {day} are in the channel topic now.",
		"Anyone else seeing slow builds? Mine took {n} minutes.",
		"Shared the {customer} feedback in {doc}, worth a read.",
		"Reminder: {feature} demo at {worktime}, bring questions.",
		"{First}, do you have the numbers for {metric} handy?",
		"I am heads-down on {feature} until lunch, ping me if urgent.",
		"New bug in {feature}: the save button does nothing on Safari.",
		"Can someone from {team} look at this before {day}?",
		"Moving the retro to {day} because half of us are out.",
		"TIL {system} retries failed jobs {n} times before giving up.",
		"{Metric} dashboard is live, link in {doc}.",
		"Picked up the ticket about {feature}, will post a fix {when}.",
		"The {team} team is hiring, please share the posting.",
		"Finished the migration for {customer}, everything looks clean.",
		"Who is on call this week? {system} alerts are going to me.",
		"Design QA for {feature} is done, two small issues left.",
	}
	personalPlans = []string{
		"Are we still on for dinner at {restaurant} on Friday? I can book a table for {evening}.",
		"I finally finished {book} and I need to talk to someone about the ending.",
		"The forecast says {weather} all weekend, so maybe we save {trail} for next month.",
		"Can I borrow {thing} for the weekend? I will bring it back on Sunday night.",
		"I made {dish} for the first time and it was honestly better than the restaurant version.",
		"I am climbing at the gym on Tuesday evening if you want to come along.",
		"Mom says hi and asks when you are coming to Sacramento next.",
		"Let us do brunch somewhere on {neighborhood}, I have not been over there in ages.",
		"The running club is doing a long run along the waterfront on Saturday, starting at {morning}.",
		"I found a tiny bookshop near {neighborhood} that you would absolutely love.",
		"Work has been a lot lately, so a slow weekend sounds perfect.",
		"We should plan the {trail} hike before the weather turns.",
		"Did you ever hear back about the apartment? Fingers crossed for you.",
		"My landlord finally fixed the radiator, so the living room is usable again.",
		"I still think about the pastries we had in {city}.",
		"Happy birthday! Dinner is on me this time, no arguments.",
		"Let me know what you want to bring to the potluck, I am doing {dish}.",
		"I started a sourdough starter and named it Gerald, which tells you how my week is going.",
		"Bring a jacket, it gets cold by the river after sunset.",
		"Thanks again for having me over, the kids were hilarious.",
	}
	personalTrip = []string{
		"The flight lands at {morning} local time, so I should be at the hotel by early afternoon.",
		"I booked the apartment near the river for four nights; it has a tiny balcony.",
		"We should take the train to Porto for a day if the weather is good.",
		"Ines says the best custard tarts are not at the famous place but at a bakery two streets over.",
		"I am bringing one carry-on and nothing else, pray for me.",
		"The museum is closed on Mondays, so let us swap those two days around.",
		"Travel insurance is sorted, and the confirmation is in my inbox if we need it.",
		"Can you send me your passport details for the booking?",
		"I will exchange a little cash at the airport but mostly use the card.",
		"The hotel can store our bags if we arrive before check-in.",
		"I made a list of places to eat, ranked entirely by how good the photos look.",
	}
	retroLines = []string{
		"I think the launch went better than the numbers suggest, because the numbers include the outage on day two.",
		"What surprised me was how many teams turned on Atlas without reading any of the docs.",
		"The checklist helped, but we wrote it too late to change how we planned the work.",
		"We should have told support about the workspace switcher a week earlier than we did.",
		"I counted {n} separate places where the old navigation was still hard-coded.",
		"Honestly, the staging environment was the bottleneck for the whole last month.",
		"The beta feedback was useful, but it came mostly from admins, not from regular members.",
		"When the importer failed, the error message told people nothing they could act on.",
		"I would like us to keep the launch room channel open for another two weeks.",
		"If we do this again, design and engineering should pair from the very first week.",
		"The marketing page went live before the feature flag flipped, which confused a few customers.",
		"I do not think anyone was overloaded, but the last three days were too intense.",
		"We fixed {n} bugs in launch week, and most of them came from the same part of the code.",
		"Harborview asked for a written summary of the changes, and that took longer than it should have.",
		"Our rollback plan worked, which is the first time I can say that about a launch.",
		"I want to write down what we learned about performance before we forget the details.",
		"We underestimated how long the data migration would take on the larger workspaces.",
		"People loved saved views; that one feature generated most of the positive feedback.",
		"Can we agree that next time the launch date is set after the estimate, not before?",
		"The daily check-in at {worktime} was useful during launch week and pointless before it.",
		"I am still not sure the onboarding checklist moved activation, the data is too noisy.",
		"Support handled {big} conversations in the first week, roughly double a normal week.",
		"The thing I would keep is the shared launch doc; everybody knew where to look.",
		"The thing I would change is how late we involved the security review.",
		"Agreed. Can we write that down as an action item?",
		"I want to push back on that a little, because the delay was not only staging.",
		"Good point. Let us come back to it when we get to the action items.",
		"For the record, the feature flag rollout itself went really smoothly.",
		"Customers who came through the webinar activated at almost twice the usual rate.",
		"The migration script needed three attempts on the largest workspace, and nobody knew who should decide to retry.",
		"We should thank the support team properly; they absorbed most of the first-week chaos.",
		"I liked having a single launch owner; decisions took minutes instead of days.",
		"Our estimates were fine for the work we knew about and useless for the work we discovered.",
		"The docs were ready on time but nobody linked them from inside the product.",
		"I would like the next project to start with a one-page definition of done.",
		"Performance on the big workspaces is still not where I want it, but it is acceptable.",
		"Sales promised a date to two customers before we had committed to it, which added pressure.",
		"The launch email had the highest open rate we have ever had.",
		"Can we make the go/no-go meeting shorter next time and decide by checklist instead of by debate?",
		"Half of the bugs we fixed were regressions in code that had no tests.",
		"The design review caught the confusing permissions screen just in time.",
		"I would not change the date; I would change how early we told everyone about it.",
		"The Harborview pilot was a good test, because they use Atlas harder than anyone else.",
		"I think we underinvested in the importer because it was not the exciting part.",
		"The war room channel worked, but it was noisy; a separate channel for decisions would help.",
		"Let me be the one to say it: we were lucky that the outage happened at night.",
		"The onboarding emails need a rewrite now that the product looks different.",
		"Everyone who joined the rotation said the on-call guide was clear, which is a first.",
		"We still do not have a good answer for teams that want to undo the migration.",
	}
	newsletterLines = []string{
		"This month we are celebrating {n} years of Saturday long runs along the waterfront.",
		"Thanks to everyone who volunteered at the river cleanup; we collected {n} bags of litter.",
		"Registration for the autumn trail series opens next week and spots go quickly.",
		"Our new route on the Wildwood Trail is a little hilly but well worth it for the views.",
		"Remember to bring water on long runs, even when it feels cool in the morning.",
		"The club social is at a brewery on {neighborhood} this time; partners and friends welcome.",
		"We are looking for two pace leaders for the beginner group on Thursday evenings.",
		"Membership renewals are due at the end of the month; the fee is unchanged.",
	}

	// chatReplies answer a message in its thread.
	chatReplies = []string{
		"+1", "Agreed.", "Nice!", "On it.", "Thanks, {first}!", "Can you share the link?", "Looking now.", "Good call.",
		"I can take this one.", "Same here, {system} has been flaky all week.", "Ship it.", "Let me check with {first} and get back to you.",
		"That matches what I saw in the dashboard.", "Do we have a ticket for this?", "Yes, {day} works.", "Ha, fair.",
		"Not sure, but {first} would know.", "Done, merged.", "Can we talk about it at standup?", "Love this.",
		"Wait, is this the same issue as last week?", "I will add it to {doc}.", "Sounds right to me.", "Thanks for flagging.",
		"Following.", "Looks good from my side.", "I had the same question.", "Yep, confirmed on staging.",
	}
	// dmLines are what two colleagues send each other directly.
	dmLines = []string{
		"Do you have ten minutes this afternoon?", "Can we move our 1:1 to {day}?", "Quick question about {feature} when you have a sec.",
		"Did you see the note from {first}? Curious what you think.", "Grabbing lunch at {worktime}, want to join?",
		"I am running a bit behind, five more minutes.", "Can you look at my comments in {doc} before the review?",
		"Thanks for backing me up in that meeting.", "Heads up, {first} is going to ask about {feature} at the all-hands.",
		"Are you free to pair on {feature} tomorrow morning?", "I put a draft in {doc}, be honest.",
		"How did the call with {customer} go?", "Sending you the recording now.", "Happy Friday! Any plans for the weekend?",
		"Can you cover the {customer} check-in on {day}? I have the dentist.", "I think we should push back on the date, thoughts?",
	}
	// randomLines are the #random channel.
	randomLines = []string{
		"Who left the amazing banana bread in the kitchen?", "Dog photo of the day: Miso discovered the sprinkler.",
		"Recommendations for a bike shop near {neighborhood}?", "The food carts on {neighborhood} have a new ramen place, it is great.",
		"Anyone doing the {trail} hike this weekend?", "Reading {book} at the moment and cannot put it down.",
		"PSA: the good coffee beans are back in the cupboard.", "Is it just me or is the office freezing today?",
		"Lost: one blue umbrella, last seen near the big room.", "The {weather} this week is something else.",
		"Book club picked {book} for next month.", "Who wants to do a lunch run to {restaurant}?",
		"Happy birthday {first}! 🎂", "There is cake in the kitchen, first come first served.",
	}
	replyLines = []string{
		"Sounds good, thanks for pulling this together.",
		"Works for me. I will update {doc} tonight.",
		"Looping in {first}, who knows more about this than I do.",
		"Agreed on all points except the timeline; can we talk it through on {day}?",
		"Thanks! One small thing: can we double-check the numbers before this goes out?",
		"Yes, let us do that. I will block time {when}.",
		"Good catch. I had assumed the opposite, so I am glad you asked.",
		"I am out on {day} but happy to review async.",
		"Short answer: yes. Longer answer in {doc}.",
		"That makes sense. I will hold off until we hear back from {first}.",
		"Perfect, see you then.",
		"Can we keep this to thirty minutes? I have a hard stop.",
		"Thanks for the quick turnaround!",
		"I would push back a little on the scope, but not enough to block it.",
	}
	subjects = map[string][]string{
		"update": {
			"{Feature} status", "Atlas: {feature} update", "Where we are with {feature}", "Scope check: {feature}",
			"{Feature}: ship {when}?", "Open questions on {feature}",
		},
		"design": {
			"Design review: {feature}", "New mocks for {feature}", "Research readout: {feature}", "Feedback wanted on {feature}",
		},
		"customer": {
			"Notes from the {customer} call", "{Customer} renewal", "{Customer}: follow-up on {feature}", "Prep for the {customer} call",
		},
		"planning": {
			"Planning inputs for next quarter", "Draft goals, comments by {day} please", "Roadmap: what we are not doing",
			"Headcount and priorities", "Proposal: a cleanup week every six",
		},
		"incident": {
			"Incident follow-up: {system} timeouts", "Postmortem: {system} outage", "Heads up: {system} maintenance {when}",
		},
		"friends": {
			"Dinner this week?", "Weekend plans", "Book club: {book}", "Hike to {trail}?", "Potluck on Saturday",
			"Long time no see!", "That recipe you asked for", "Climbing Tuesday", "Re: the apartment",
		},
		"family": {
			"Sunday call", "Mom's birthday plans", "Photos from the weekend", "Thanksgiving in Sacramento",
			"Did you get the package?", "Checking in",
		},
		"trip": {
			"{City} plans", "Itinerary ideas for {city}", "Flights to {city}", "Where should we eat in {city}?",
		},
	}
)
