package evaldata

// topic is one kind of fact a user tells the assistant. Templates hold {0}, {1}, ...
// for a value's fields. In change, the new value's fields come first and the old
// value's follow (for a one-field value: {0} new, {1} old). In other, {0} is another
// person and the value's fields follow from {1}. before and history name the new value.
type topic struct {
	values  [][]string
	say     []string // the user states the fact
	change  []string // the user states that it changed; empty: it never does
	reply   []string // the assistant answers a statement
	ask     []string // single-hop questions
	para    []string // the same questions in other words
	before  []string // what held before the change
	history []string // every value the fact took
	other   []string // someone else's version of the topic
}

var topics = []topic{
	{ // pet
		values: [][]string{{"beagle", "Biscuit"}, {"tabby cat", "Miso"}, {"golden retriever", "Sunny"}, {"parrot", "Kiwi"}, {"rabbit", "Clover"}, {"corgi", "Waffles"}},
		say: []string{
			"I adopted a {0} from the shelter last month and named it {1}.",
			"We finally brought home a little {0}, we call it {1}.",
		},
		change: []string{
			"Sad news, {3} passed away, but we just adopted a {0} called {1}.",
		},
		reply: []string{"Aww, a {0}! Pets make a home feel warmer.", "A {0} is a lovely companion, enjoy!"},
		ask:   []string{"What did I name the {0} I adopted from the shelter?", "What do we call the {0} we brought home?"},
		para:  []string{"What's the name of our new {0} from the rescue?", "How is the adopting going, what name did the animal get?"},
		before: []string{
			"Which pet did I have before the {0}?",
		},
		history: []string{"Which animals have I owned?", "List the pets I've adopted."},
		other: []string{
			"My coworker {0} keeps sending me photos of a {1} named {2}.",
			"{0} is thinking about getting a {1}, maybe called {2}.",
		},
	},
	{ // job
		values: [][]string{{"nurse", "St. Mary's hospital"}, {"data analyst", "a logistics startup"}, {"high school teacher", "Lincoln High"}, {"software engineer", "a bank"}, {"pastry chef", "a French bakery"}, {"paralegal", "a law firm downtown"}},
		say: []string{
			"I work as a {0} at {1}, been there a few years now.",
			"My job is {0} at {1}, the shifts are long but I like it.",
		},
		change: []string{
			"Big update: I left {3} and started a new position as a {0} at {1}.",
		},
		reply: []string{"Being a {0} sounds demanding but rewarding.", "That's a great role, {0} work is never boring."},
		ask:   []string{"Where do I work as a {0}?", "What is my job at {1}?"},
		para:  []string{"Which employer do I have as {0}?", "What did I say about working shifts, which job?"},
		before: []string{
			"What was my job before I became a {0}?",
		},
		history: []string{"What jobs have I had?", "Which positions did I hold over time?"},
		other: []string{
			"My neighbour {0} just got hired as a {1} at {2}.",
			"{0} told me the {1} job at {2} pays really well.",
		},
	},
	{ // home city
		values: [][]string{{"Denver"}, {"Austin"}, {"Portland"}, {"Chicago"}, {"Boston"}, {"Seattle"}, {"Atlanta"}},
		say: []string{
			"I live in {0}, moved here for the mountains and the food scene.",
			"Home for me is {0}, I rent a small apartment near downtown.",
		},
		change: []string{
			"We packed everything and relocated from {1} to {0} last week.",
		},
		reply: []string{"{0} is a great city to live in!", "I've heard good things about {0}."},
		ask:   []string{"Which city do I live in, near downtown?", "Where did I move for the mountains and food?"},
		para:  []string{"Where is my apartment located?", "What town do I rent a place in?"},
		before: []string{
			"Where did I live before moving to {0}?",
		},
		history: []string{"Which cities have I lived in?", "Where have I made my home over the years?"},
		other: []string{
			"My cousin {0} lives in {1} and loves it there.",
			"{0} just moved to {1} for a new job.",
		},
	},
	{ // hobby
		values: [][]string{{"pottery"}, {"rock climbing"}, {"watercolor painting"}, {"salsa dancing"}, {"woodworking"}, {"birdwatching"}},
		say: []string{
			"I've picked up {0} on weekends, it really clears my head.",
			"My new hobby is {0}, I go to a class every Saturday.",
		},
		change: []string{
			"I stopped doing {1} and now spend my weekends on {0} instead.",
		},
		reply: []string{"{0} is such a relaxing pastime.", "Good for you, {0} takes patience."},
		ask:   []string{"What hobby did I pick up on weekends?", "Which class do I go to every Saturday?"},
		para:  []string{"What do I like to do in my free time on weekends?", "What classes help clear my head?"},
		before: []string{
			"What did I do on weekends before {0}?",
		},
		history: []string{"Which hobbies have I tried?", "What pastimes have I had?"},
		other: []string{
			"{0} invited me to try {1} with them, not sure it's for me.",
			"My friend {0} is obsessed with {1} lately.",
		},
	},
	{ // sibling
		values: [][]string{{"sister", "Emma", "Toronto"}, {"brother", "Lucas", "Madrid"}, {"sister", "Priya", "Mumbai"}, {"brother", "Noah", "Sydney"}, {"sister", "Hana", "Osaka"}},
		say: []string{
			"My {0} {1} lives in {2}, I only see them once a year.",
			"I miss my {0} {1}, who moved to {2} years ago.",
		},
		reply: []string{"Long distance with family is hard.", "It must be nice to visit {2} though."},
		ask:   []string{"Where does my {0} live?", "What is the name of my {0} who moved?"},
		para:  []string{"Where did {1} move to years ago?", "In which city is my sibling based?"},
		other: []string{
			"{0}'s {1} {2} is visiting from {3} next week.",
		},
	},
	{ // allergy
		values: [][]string{{"peanuts"}, {"shellfish"}, {"penicillin"}, {"cat dander"}, {"gluten"}, {"bee stings"}},
		say: []string{
			"Just so you know, I'm allergic to {0}, it's pretty serious.",
			"I found out I have an allergy to {0} after a bad reaction.",
		},
		reply: []string{"Thanks for telling me, I'll keep your {0} allergy in mind.", "Allergies can be scary, stay safe."},
		ask:   []string{"What am I allergic to?", "Which serious allergy do I have?"},
		para:  []string{"What gave me a bad reaction?", "What do I have to avoid for my allergies?"},
		other: []string{
			"{0} had to go to the ER because of {1}.",
			"At lunch {0} asked whether the dish had any {1} in it.",
		},
	},
	{ // car
		values: [][]string{{"Subaru Outback"}, {"Honda Civic"}, {"Tesla Model 3"}, {"Ford F-150"}, {"Toyota Prius"}, {"Mazda Miata"}},
		say: []string{
			"I drive a {0}, bought it used and it's been reliable.",
			"My car is a {0}, perfect for road trips.",
		},
		change: []string{
			"I sold the {1} and bought a {0} last weekend.",
		},
		reply: []string{"The {0} is a solid choice.", "Nice, enjoy the {0} on the road!"},
		ask:   []string{"What car do I drive?", "Which used car did I buy?"},
		para:  []string{"What vehicle do I own for road trips?", "Is my driving reliable, what car was it?"},
		before: []string{
			"What did I drive before the {0}?",
		},
		history: []string{"Which cars have I owned?", "What vehicles have I had?"},
		other: []string{
			"{0} just bought a {1} and won't stop talking about it.",
			"My uncle {0} drives an old {1}.",
		},
	},
	{ // trip
		values: [][]string{{"Japan", "Kyoto"}, {"Italy", "Florence"}, {"Peru", "Cusco"}, {"Iceland", "Reykjavik"}, {"Morocco", "Marrakesh"}, {"Vietnam", "Hanoi"}},
		say: []string{
			"I'm booking a trip to {0} in October, mostly to see {1}.",
			"My vacation this year is {0}, starting in {1}.",
		},
		change: []string{
			"We cancelled {2} and are going to {0} instead, flying into {1}.",
		},
		reply: []string{"{0} sounds amazing, {1} especially!", "What a great destination, {0} has so much to see."},
		ask:   []string{"Where am I booking a trip to in October?", "Which country is my vacation this year?"},
		para:  []string{"Where will I travel for my holiday?", "Which trips did I book, where to?"},
		before: []string{
			"Where was I planning to travel before choosing {0}?",
		},
		history: []string{"Which vacation destinations did I plan?", "What trips have I booked?"},
		other: []string{
			"{0} just got back from {1} and showed me pictures of {2}.",
			"{0} recommended a tour of {2} in {1}.",
		},
	},
	{ // diet
		values: [][]string{{"vegetarian"}, {"vegan"}, {"keto"}, {"pescatarian"}, {"gluten-free"}},
		say: []string{
			"I've been eating {0} for about a year now.",
			"I follow a {0} diet, so I cook most meals at home.",
		},
		change: []string{
			"I gave up being {1} and switched to a {0} diet.",
		},
		reply: []string{"Sticking to a {0} diet takes discipline.", "{0} cooking can be really tasty."},
		ask:   []string{"What diet do I follow?", "What have I been eating for about a year?"},
		para:  []string{"What kind of food do I eat?", "What diets am I following when I cook meals?"},
		before: []string{
			"Which diet did I follow before going {0}?",
		},
		history: []string{"Which diets have I followed?", "How has my eating changed?"},
		other: []string{
			"{0} went {1} for a month and hated it.",
			"{0} asked me for {1} recipes.",
		},
	},
	{ // instrument
		values: [][]string{{"cello"}, {"guitar"}, {"piano"}, {"saxophone"}, {"violin"}, {"drums"}},
		say: []string{
			"I started taking {0} lessons, I practice every evening.",
			"I've been learning to play the {0}, my teacher is very patient.",
		},
		change: []string{
			"I quit the {1} and switched to {0} lessons.",
		},
		reply: []string{"The {0} is a beautiful instrument.", "Practice makes perfect with the {0}!"},
		ask:   []string{"Which instrument am I learning to play?", "What lessons am I taking?"},
		para:  []string{"What music am I studying to play?", "What do I practicing in the evenings?"},
		before: []string{
			"What instrument did I play before {0}?",
		},
		history: []string{"Which instruments have I learned?", "What music lessons have I taken?"},
		other: []string{
			"{0} plays {1} in a band on Fridays.",
			"My niece {0} wants {1} lessons for her birthday.",
		},
	},
	{ // partner
		values: [][]string{{"Daniel", "an architect"}, {"Sofia", "a doctor"}, {"Marcus", "a firefighter"}, {"Aiko", "a photographer"}, {"Elena", "a lawyer"}},
		say: []string{
			"My partner {0} is {1} by trade, we've been together six years.",
			"{0}, my spouse, is {1} and always busy.",
		},
		reply: []string{"{0} sounds wonderful.", "Six years, that's lovely!"},
		ask:   []string{"What is my partner's name?", "How long have I been together with my partner?"},
		para:  []string{"Who am I married to?", "What is my spouse busy with at work?"},
		other: []string{
			"{0} started dating someone named {1}.",
			"{0}'s husband {1} is {2} too.",
		},
	},
	{ // sport team
		values: [][]string{{"Chicago Cubs"}, {"Boston Celtics"}, {"Green Bay Packers"}, {"Manchester United"}, {"Toronto Maple Leafs"}},
		say: []string{
			"I'm a die-hard {0} fan, never miss a game.",
			"Season tickets for the {0} are my one luxury.",
		},
		reply: []string{"The {0} have loyal fans!", "Go {0}!"},
		ask:   []string{"Which team am I a fan of?", "What team do I have season tickets for?"},
		para:  []string{"Who do I root for in sports?", "Which games do I never miss?"},
		other: []string{
			"{0} hates the {1} with a passion.",
			"{0} got free seats to a {1} match.",
		},
	},
	{ // health
		values: [][]string{{"knee", "physical therapy"}, {"back", "a chiropractor"}, {"shoulder", "surgery"}, {"wrist", "a brace"}, {"ankle", "rest and ice"}},
		say: []string{
			"I hurt my {0} while running, the doctor suggested {1}.",
			"My {0} injury is acting up again, so it's {1} for now.",
		},
		reply: []string{"I hope your {0} heals quickly.", "Take it easy with that {0}."},
		ask:   []string{"Which injury did I have?", "What did the doctor suggest for my injury?"},
		para:  []string{"What part of my body got hurt running?", "How am I treating the injuries I told you about?"},
		other: []string{
			"{0} twisted a {1} playing soccer.",
			"{0} said {2} worked for his {1}.",
		},
	},
	{ // favourite book
		values: [][]string{{"Dune"}, {"Pride and Prejudice"}, {"The Hobbit"}, {"Beloved"}, {"The Road"}, {"Middlemarch"}},
		say: []string{
			"My favorite book of all time is {0}, I reread it every summer.",
			"Nothing beats {0}, it's the novel I love most.",
		},
		reply: []string{"{0} is a classic.", "Rereading {0} is a great tradition."},
		ask:   []string{"What is my favorite book?", "Which novel do I reread every summer?"},
		para:  []string{"Which story do I love reading the most?", "What's the one book I always go back to?"},
		other: []string{
			"{0} says {1} is overrated.",
			"{0} lent me a copy of {1}.",
		},
	},
	{ // school
		values: [][]string{{"nursing", "the community college"}, {"an MBA", "night school"}, {"computer science", "an online program"}, {"photography", "the art institute"}, {"Spanish", "a language school"}},
		say: []string{
			"I enrolled in {0} courses at {1} this fall.",
			"I'm studying {0} at {1}, classes are twice a week.",
		},
		change: []string{
			"I dropped {2} and enrolled in {0} at {1} instead.",
		},
		reply: []string{"Studying {0} while working is impressive.", "Good luck with {0}!"},
		ask:   []string{"What am I studying?", "Which courses did I enroll in this fall?"},
		para:  []string{"What subject am I taking classes in?", "What am I learning at school these days?"},
		before: []string{
			"What was I studying before {0}?",
		},
		history: []string{"Which courses of study have I enrolled in?", "What programs have I studied?"},
		other: []string{
			"{0} graduated in {1} from {2}.",
			"{0} keeps telling me to try {1}.",
		},
	},
	{ // gym
		values: [][]string{{"5 a.m.", "yoga"}, {"lunchtime", "spin"}, {"evening", "CrossFit"}, {"early morning", "swimming laps"}, {"weekend", "boxing"}},
		say: []string{
			"I do {1} at the gym every {0}, it keeps me sane.",
			"My workout routine is {1}, usually at {0}.",
		},
		change: []string{
			"I switched my workout from {3} to {1}, still at {0}.",
		},
		reply: []string{"{1} is a great workout.", "A {0} routine takes commitment!"},
		ask:   []string{"What workout do I do at the gym?", "When do I go to the gym?"},
		para:  []string{"How do I exercise?", "What's my fitness routine?"},
		before: []string{
			"What exercise did I do before {1}?",
		},
		history: []string{"Which workouts have I done?", "How has my exercise routine changed?"},
		other: []string{
			"{0} signed up for {2} classes.",
			"{0} says {2} at {1} is the best time.",
		},
	},
	{ // birthday
		values: [][]string{{"March 14"}, {"July 2"}, {"November 23"}, {"January 8"}, {"September 30"}},
		say: []string{
			"My birthday is {0}, I'm planning a small dinner.",
			"I turn thirty-five on {0}, kind of dreading it.",
		},
		reply: []string{"Happy early birthday!", "A birthday dinner sounds perfect."},
		ask:   []string{"When is my birthday?", "When is my birthday dinner?"},
		para:  []string{"On which day was I born?", "When do I turn thirty-five?"},
		other: []string{
			"{0}'s birthday is on {1}, I need a gift.",
			"We threw {0} a surprise party on {1}.",
		},
	},
	{ // language
		values: [][]string{{"Portuguese"}, {"Korean"}, {"German"}, {"Arabic"}, {"French"}, {"Mandarin"}},
		say: []string{
			"I'm learning {0} with an app, twenty minutes a day.",
			"I've started {0} classes so I can talk to my in-laws.",
		},
		change: []string{
			"I paused {1} and started learning {0} instead.",
		},
		reply: []string{"{0} is a beautiful language.", "Keep it up, {0} gets easier!"},
		ask:   []string{"Which language am I learning with an app?", "Which language classes did I start?"},
		para:  []string{"What foreign tongue am I studying?", "Which language do I practise daily?"},
		before: []string{
			"Which language was I learning before {0}?",
		},
		history: []string{"Which languages have I studied?", "What languages have I tried to learn?"},
		other: []string{
			"{0} speaks fluent {1}.",
			"{0} gave up on {1} after a week.",
		},
	},
}

var people = []string{
	"Jake", "Maria", "Tom", "Aisha", "Chen", "Olivia", "Raj", "Grace", "Mateo", "Zoe",
	"Ben", "Fatima", "Leo", "Nina", "Sam", "Ivy",
}

// smallTalk is what a user says between facts. Some lines share words with the
// topics (work, weekend, dinner, trip) without stating anything about the user.
var smallTalk = []string{
	"Hey, how's it going?",
	"Thanks, that helps a lot.",
	"Haha, that's so true.",
	"Can you remind me to call the bank tomorrow?",
	"What's a good recipe for dinner tonight?",
	"Ugh, Mondays are the worst.",
	"I had such a long day at work.",
	"The weather has been terrible all week.",
	"Any movie recommendations for the weekend?",
	"I need to plan my week better.",
	"Do you know any good podcasts?",
	"I'm so tired, I barely slept last night.",
	"Can you help me write an email to my landlord?",
	"I just finished a really good show.",
	"My phone keeps dying, so annoying.",
	"What should I get my mom for her birthday?",
	"I'm trying to drink more water.",
	"Traffic this morning was insane.",
	"How do I make cold brew coffee?",
	"I keep forgetting to water my plants.",
	"Any tips for staying focused at work?",
	"I want to read more books this year.",
	"Should I go to the party on Saturday?",
	"What's a healthy breakfast idea?",
	"I'm thinking about a trip somewhere warm someday.",
	"My friends want to go hiking next weekend.",
	"I spent the whole evening cleaning the apartment.",
	"Can you suggest a gift for a coworker?",
	"I need a new pair of running shoes.",
	"The neighbours were loud again last night.",
}

// replies is what the assistant says to small talk.
var replies = []string{
	"That sounds great! Tell me more.",
	"I'm here to help whenever you need.",
	"That makes sense, thanks for sharing.",
	"Sure, I can help with that.",
	"Sorry to hear that, I hope tomorrow is better.",
	"Here's an idea: start small and build a habit.",
	"Good question! Let me think about it.",
	"That's totally understandable.",
	"I'd suggest making a short list first.",
	"Sounds like a fun plan!",
}

// openings and closings are the chatter around a statement.
var openings = []string{
	"Oh wow, honestly,",
	"So anyway, I was thinking about it the other day and",
	"You know what, it's been a really crazy week, but",
	"Okay so quick thing, I really wanted to tell you that",
	"Haha yeah, well,",
	"I don't know if I mentioned it, but",
	"Honestly, things have been going pretty well lately, and",
	"Right, so, funny story,",
	"Hmm, let me think, I guess",
	"By the way, I really feel like I should say",
}

var closings = []string{
	"Anyway, what do you think?",
	"It's been a lot to think about, honestly.",
	"I'm really happy about it, I think.",
	"Life has been so busy lately, you know?",
	"Does that make sense?",
	"I feel like things are finally going well.",
	"Just wanted to share that with you today.",
	"Kind of crazy how time flies, right?",
	"I think it's really going to be good.",
	"Let me know what you think about it.",
}
