"""The demo campus's subjects and courses, written by hand so that searches have something real
to find: a student who asks for "a class about the stock market" should meet FINC 3300.

Each course is ``(number, title, description, kind)``; ``kind`` decides its meeting pattern:
``"lec"`` a lecture, ``"lab"`` a lecture with a paired 3-hour lab, ``"studio"`` a design studio,
``"sem"`` a small seminar.
"""

from __future__ import annotations

from typing import Literal

CourseKind = Literal["lec", "lab", "studio", "sem"]
CourseRow = tuple[str, str, str, CourseKind]

SCHOOLS = {
    "computing": "School of Computing and Data Science",
    "engineering": "School of Engineering",
    "design": "School of Architecture and Design",
    "management": "School of Management",
    "sciences": "School of Sciences and Humanities",
}

# code -> (name, school key)
SUBJECTS: dict[str, tuple[str, str]] = {
    "COMP": ("Computer Science", "computing"),
    "DATA": ("Data Science", "computing"),
    "CYBR": ("Cybersecurity", "computing"),
    "ELEC": ("Electrical Engineering", "engineering"),
    "MECH": ("Mechanical Engineering", "engineering"),
    "CIVE": ("Civil Engineering", "engineering"),
    "BMED": ("Biomedical Engineering", "engineering"),
    "ENGR": ("Engineering", "engineering"),
    "ARCH": ("Architecture", "design"),
    "INDS": ("Industrial Design", "design"),
    "INTD": ("Interior Design", "design"),
    "COMD": ("Communication Design", "design"),
    "CONM": ("Construction Management", "management"),
    "MGMT": ("Management", "management"),
    "FINC": ("Finance", "management"),
    "ACCT": ("Accounting", "management"),
    "MKTG": ("Marketing", "management"),
    "MATH": ("Mathematics", "sciences"),
    "PHYS": ("Physics", "sciences"),
    "CHEM": ("Chemistry", "sciences"),
    "BIOL": ("Biology", "sciences"),
    "ECON": ("Economics", "sciences"),
    "ENGL": ("English", "sciences"),
    "HIST": ("History", "sciences"),
    "PSYC": ("Psychology", "sciences"),
    "PHIL": ("Philosophy", "sciences"),
    "SOCL": ("Sociology", "sciences"),
    "COMM": ("Communication", "sciences"),
    "SPAN": ("Spanish", "sciences"),
    "ARTS": ("Fine Arts", "sciences"),
}

COURSES: dict[str, list[CourseRow]] = {
    "COMP": [
        (
            "1000",
            "Introduction to Programming",
            "A first course in programming for students with no experience. Variables, conditions, loops, functions and lists in Python, with weekly problem-solving exercises.",
            "lab",
        ),
        (
            "1050",
            "Computer Science II",
            "Object-oriented programming in Java: classes, inheritance, interfaces, exceptions, recursion and unit testing of larger programs.",
            "lab",
        ),
        (
            "2000",
            "Data Structures",
            "Lists, stacks, queues, hash tables, trees and graphs; how to choose a data structure and measure the running time of an algorithm.",
            "lec",
        ),
        (
            "2100",
            "Computer Organization",
            "How a computer runs a program: binary numbers, logic gates, assembly language, memory and the processor pipeline.",
            "lec",
        ),
        (
            "2350",
            "Database Management Systems",
            "Designing relational databases, writing SQL queries, normalisation, transactions and indexes, with a term project on a real data set.",
            "lec",
        ),
        (
            "3000",
            "Algorithms",
            "Sorting, searching, divide and conquer, dynamic programming, greedy algorithms and graph algorithms, with proofs of correctness and running time.",
            "lec",
        ),
        (
            "3450",
            "Web Development",
            "Building web applications: HTML, CSS, JavaScript, HTTP, REST APIs and a server-side framework, deployed by each team.",
            "lec",
        ),
        (
            "3500",
            "Operating Systems",
            "Processes, threads, scheduling, memory management, file systems and concurrency, with programming projects in C.",
            "lec",
        ),
        (
            "4100",
            "Machine Learning",
            "Supervised and unsupervised learning: regression, classification, neural networks and model evaluation, implemented in Python.",
            "lec",
        ),
        (
            "4960",
            "Senior Design in Computer Science",
            "A two-term team project that builds software for a real client, from requirements to delivery.",
            "sem",
        ),
    ],
    "DATA": [
        (
            "1000",
            "Foundations of Data Science",
            "Asking questions of data: collecting, cleaning and visualising data sets and telling a story with them in Python notebooks.",
            "lec",
        ),
        (
            "2000",
            "Statistical Computing",
            "Probability, sampling, hypothesis tests and regression, computed in R and Python on real data.",
            "lec",
        ),
        (
            "2500",
            "Data Visualization",
            "Designing charts and dashboards that communicate clearly; perception, colour and interactive graphics for the web.",
            "lec",
        ),
        (
            "3100",
            "Data Mining",
            "Finding patterns in large data sets: clustering, association rules, decision trees and anomaly detection.",
            "lec",
        ),
        (
            "3300",
            "Big Data Systems",
            "Storing and processing data that does not fit on one computer: distributed file systems, Spark and cloud data warehouses.",
            "lec",
        ),
        (
            "4200",
            "Deep Learning and Artificial Intelligence",
            "Neural networks for images and language, training on GPUs, and the ethics of deploying artificial intelligence.",
            "lec",
        ),
        (
            "4900",
            "Data Science Capstone",
            "A semester project with an outside partner that takes a question from raw data to a presented answer.",
            "sem",
        ),
    ],
    "CYBR": [
        (
            "1100",
            "Introduction to Cybersecurity",
            "Threats, vulnerabilities and defences; passwords, encryption basics, malware and how attackers break into systems.",
            "lec",
        ),
        (
            "2200",
            "Network Security",
            "Protocols of the internet and how they are attacked: firewalls, VPNs, intrusion detection and packet analysis in a lab.",
            "lab",
        ),
        (
            "2500",
            "Cryptography",
            "The mathematics of secret messages: symmetric ciphers, public-key cryptography, hashing and digital signatures.",
            "lec",
        ),
        (
            "3300",
            "Ethical Hacking",
            "Penetration testing of web applications and networks in a safe lab, and writing a report a client can act on.",
            "lab",
        ),
        (
            "3600",
            "Digital Forensics",
            "Recovering evidence from computers and phones after an incident, and the legal rules for handling it.",
            "lec",
        ),
        (
            "4500",
            "Security Operations",
            "Running a security operations centre: logging, monitoring, incident response and threat hunting.",
            "lec",
        ),
    ],
    "ELEC": [
        (
            "1100",
            "Electric Circuits I",
            "Voltage, current, resistance, Kirchhoff's laws and the analysis of DC circuits, with measurements in the lab.",
            "lab",
        ),
        (
            "2100",
            "Electric Circuits II",
            "AC circuits, phasors, impedance, power and frequency response of filters.",
            "lab",
        ),
        (
            "2250",
            "Digital Logic Design",
            "Boolean algebra, combinational and sequential logic, state machines and programmable logic devices.",
            "lab",
        ),
        (
            "3150",
            "Microcontrollers",
            "Programming embedded systems in C: sensors, timers, interrupts and serial communication on a microcontroller board.",
            "lab",
        ),
        (
            "3300",
            "Signals and Systems",
            "Continuous and discrete signals, convolution, Fourier and Laplace transforms and linear systems.",
            "lec",
        ),
        (
            "3700",
            "Power Systems and Renewable Energy",
            "Generating and distributing electric power, the grid, solar and wind energy and energy storage.",
            "lec",
        ),
        (
            "4400",
            "Communication Systems",
            "Modulation, noise, wireless channels and the design of radio and digital communication links.",
            "lec",
        ),
    ],
    "MECH": [
        (
            "1000",
            "Engineering Graphics and CAD",
            "Sketching and modelling parts in 3D CAD software, technical drawings, tolerances and assemblies.",
            "lab",
        ),
        (
            "2200",
            "Statics",
            "Forces and moments on rigid bodies in equilibrium: trusses, frames, friction and centroids.",
            "lec",
        ),
        (
            "2500",
            "Dynamics",
            "Motion of particles and rigid bodies: kinematics, Newton's laws, work, energy and momentum.",
            "lec",
        ),
        (
            "3000",
            "Thermodynamics",
            "Energy, heat and work; the laws of thermodynamics, engines, refrigerators and power cycles.",
            "lec",
        ),
        (
            "3200",
            "Fluid Mechanics",
            "Fluids at rest and in motion: pressure, buoyancy, pipe flow, drag and lift, with experiments in the lab.",
            "lab",
        ),
        (
            "3400",
            "Machine Design",
            "Designing shafts, gears, bearings and fasteners for strength and fatigue life.",
            "lec",
        ),
        (
            "4300",
            "Robotics",
            "Kinematics, sensors, actuators and control of robots, with a team project that builds a mobile robot.",
            "lab",
        ),
    ],
    "CIVE": [
        (
            "2000",
            "Surveying",
            "Measuring land with levels, total stations and GPS; maps, traverses and site layout in the field.",
            "lab",
        ),
        (
            "2300",
            "Mechanics of Materials",
            "Stress and strain in beams, shafts and columns; bending, torsion and buckling.",
            "lec",
        ),
        (
            "3100",
            "Structural Analysis",
            "Loads on buildings and bridges and the analysis of beams, trusses and frames.",
            "lec",
        ),
        (
            "3300",
            "Geotechnical Engineering",
            "Soils as an engineering material: classification, compaction, consolidation, foundations and slopes.",
            "lab",
        ),
        (
            "3500",
            "Environmental Engineering",
            "Water treatment, wastewater, air quality and solid waste, and the regulations that govern them.",
            "lec",
        ),
        (
            "4200",
            "Transportation Engineering",
            "Designing roads and intersections, traffic flow, public transit and planning for a city's travel.",
            "lec",
        ),
    ],
    "BMED": [
        (
            "1000",
            "Introduction to Biomedical Engineering",
            "How engineers design medical devices, from heart valves to imaging machines, and the rules that keep patients safe.",
            "lec",
        ),
        (
            "2500",
            "Biomechanics",
            "Forces in the human body: bones, muscles, joints and the mechanics of walking and injury.",
            "lec",
        ),
        (
            "3100",
            "Medical Imaging",
            "X-ray, CT, MRI and ultrasound: the physics of each and how images are formed and read.",
            "lec",
        ),
        (
            "3300",
            "Biomaterials",
            "Metals, polymers and ceramics used inside the body and how tissue responds to them.",
            "lab",
        ),
        (
            "4100",
            "Medical Device Design",
            "Designing a medical device for a clinical need, with FDA regulation and testing.",
            "sem",
        ),
    ],
    "ENGR": [
        (
            "1000",
            "Engineering Design I",
            "A hands-on introduction to the design process: teamwork, prototyping, and presenting a design to a client.",
            "studio",
        ),
        (
            "1500",
            "Programming for Engineers",
            "Solving engineering problems with MATLAB: data analysis, plotting, numerical methods and simulation.",
            "lab",
        ),
        (
            "2000",
            "Engineering Economics",
            "Time value of money, cost estimation and comparing design alternatives on cost over their life.",
            "lec",
        ),
        (
            "3000",
            "Engineering Ethics and Professional Practice",
            "Case studies of engineering failures, professional licensure and an engineer's duty to the public.",
            "sem",
        ),
        ("3900", "Co-op Preparation", "Resumes, interviews and what employers expect of a co-op student.", "sem"),
    ],
    "ARCH": [
        (
            "1000",
            "Architectural Design Studio I",
            "Drawing, physical models and the basic elements of architectural space, in a studio with desk critiques.",
            "studio",
        ),
        (
            "1500",
            "History of Architecture I",
            "Buildings from the ancient world to the Renaissance and what they tell us about the cultures that made them.",
            "lec",
        ),
        (
            "2000",
            "Architectural Design Studio II",
            "Designing small buildings on real sites: program, light, structure and materials.",
            "studio",
        ),
        (
            "2600",
            "Building Technology",
            "How buildings are put together: wood, steel and concrete structures, envelopes and building codes.",
            "lec",
        ),
        (
            "3000",
            "Urban Design Studio",
            "Designing streets, squares and neighbourhoods with the community and the city in mind.",
            "studio",
        ),
        (
            "3500",
            "Digital Fabrication",
            "Laser cutting, 3D printing and CNC milling as tools for design, from file to finished model.",
            "studio",
        ),
        (
            "4000",
            "Sustainable Design",
            "Designing buildings that use little energy and water: daylight, passive heating and cooling, and green materials.",
            "lec",
        ),
    ],
    "INDS": [
        (
            "1000",
            "Industrial Design Studio I",
            "Sketching, form and model making for everyday products, in the studio.",
            "studio",
        ),
        (
            "2100",
            "Materials and Processes",
            "How products are made: injection moulding, casting, sheet metal and choosing materials.",
            "lec",
        ),
        (
            "2500",
            "Human Factors and Ergonomics",
            "Designing products that fit the human body and mind, with user research and usability tests.",
            "lec",
        ),
        (
            "3000",
            "Product Design Studio",
            "Designing a product from research to a working prototype for a sponsor.",
            "studio",
        ),
        (
            "3300",
            "Furniture Design",
            "Designing and building a piece of furniture in the wood and metal shops.",
            "studio",
        ),
    ],
    "INTD": [
        (
            "1000",
            "Interior Design Studio I",
            "Space planning, colour and light in small interiors, drawn by hand and in CAD.",
            "studio",
        ),
        (
            "2200",
            "Textiles and Finishes",
            "Fabrics, flooring and wall finishes: performance, codes and sustainability.",
            "lec",
        ),
        ("3000", "Commercial Interiors Studio", "Designing offices, shops and restaurants for real clients.", "studio"),
        ("3400", "Lighting Design", "Natural and electric light in interiors: fixtures, calculations and mood.", "lec"),
    ],
    "COMD": [
        (
            "1000",
            "Design Fundamentals",
            "Composition, colour, typography and visual communication through weekly design exercises.",
            "studio",
        ),
        (
            "2000",
            "Typography",
            "Type as a design material: letterforms, hierarchy, grids and layout for print and screen.",
            "studio",
        ),
        (
            "2500",
            "User Experience Design",
            "Researching users, wireframes, prototypes and usability testing of apps and websites.",
            "studio",
        ),
        ("3000", "Motion Graphics", "Animation and video for brands and interfaces, with After Effects.", "studio"),
        ("3300", "Branding and Identity", "Designing logos and visual identities for organisations.", "studio"),
    ],
    "CONM": [
        (
            "1000",
            "Introduction to Construction Management",
            "How a building project is run, from bid to closeout, and the people who run it.",
            "lec",
        ),
        (
            "2000",
            "Construction Estimating",
            "Quantity takeoff and cost estimates for a building from its drawings.",
            "lec",
        ),
        (
            "2500",
            "Construction Scheduling",
            "Planning and scheduling construction projects with the critical path method.",
            "lec",
        ),
        (
            "3000",
            "Construction Law and Contracts",
            "Contracts, claims, liability and dispute resolution on construction projects.",
            "lec",
        ),
        (
            "3500",
            "Construction Safety",
            "OSHA regulations, site safety plans and preventing accidents on the job site.",
            "lec",
        ),
    ],
    "MGMT": [
        (
            "1000",
            "Principles of Management",
            "How organisations are planned, organised, led and controlled, with cases from real companies.",
            "lec",
        ),
        (
            "2100",
            "Organizational Behavior",
            "People at work: motivation, teams, leadership, conflict and culture.",
            "lec",
        ),
        (
            "2500",
            "Project Management",
            "Planning projects on time and on budget: scope, schedules, risk and agile methods.",
            "lec",
        ),
        (
            "3000",
            "Entrepreneurship",
            "Starting a business: finding an idea, testing it with customers, and writing a business plan to pitch to investors.",
            "sem",
        ),
        (
            "3300",
            "Operations Management",
            "Supply chains, inventory, quality and how products and services are delivered efficiently.",
            "lec",
        ),
        ("4000", "Business Strategy", "How companies compete, with case discussions and a strategy simulation.", "sem"),
    ],
    "FINC": [
        (
            "2000",
            "Personal Finance",
            "Budgeting, credit, student loans, insurance, taxes and saving for retirement: managing your own money.",
            "lec",
        ),
        (
            "2500",
            "Corporate Finance",
            "How companies raise and spend money: the time value of money, capital budgeting and the cost of capital.",
            "lec",
        ),
        (
            "3300",
            "Investments",
            "How the stock market works: stocks, bonds, mutual funds, building a portfolio and the trade-off between risk and return.",
            "lec",
        ),
        (
            "3500",
            "Financial Markets and Institutions",
            "Banks, the Federal Reserve, interest rates and how money moves through the financial system.",
            "lec",
        ),
        (
            "4100",
            "Trading and Portfolio Management",
            "Managing a real student-run investment fund: analysing companies, trading shares and reporting performance.",
            "sem",
        ),
    ],
    "ACCT": [
        (
            "2000",
            "Financial Accounting",
            "Recording business transactions and reading balance sheets, income statements and cash flow statements.",
            "lec",
        ),
        ("2100", "Managerial Accounting", "Costs, budgets and the numbers managers use to make decisions.", "lec"),
        (
            "3000",
            "Intermediate Accounting",
            "Revenue recognition, assets, liabilities and the accounting standards behind financial reports.",
            "lec",
        ),
        ("3500", "Federal Taxation", "Income tax for individuals and businesses, and preparing tax returns.", "lec"),
    ],
    "MKTG": [
        (
            "2000",
            "Principles of Marketing",
            "Customers, products, pricing, promotion and distribution: how companies create and sell value.",
            "lec",
        ),
        ("2500", "Consumer Behavior", "Why people buy what they buy: psychology, culture and decision making.", "lec"),
        (
            "3000",
            "Digital Marketing",
            "Social media, search engine optimisation, online advertising and analytics.",
            "lec",
        ),
        ("3300", "Marketing Research", "Surveys, focus groups and data analysis to answer marketing questions.", "lec"),
    ],
    "MATH": [
        (
            "1000",
            "College Algebra",
            "Equations, functions, graphs, exponentials and logarithms to prepare for calculus.",
            "lec",
        ),
        (
            "1750",
            "Engineering Calculus I",
            "Limits, derivatives and their applications, and an introduction to integrals.",
            "lec",
        ),
        (
            "1850",
            "Engineering Calculus II",
            "Techniques of integration, sequences and series, and applications of integrals.",
            "lec",
        ),
        (
            "2100",
            "Discrete Mathematics",
            "Logic, proofs, sets, counting, relations and graphs for computer science.",
            "lec",
        ),
        (
            "2300",
            "Linear Algebra",
            "Matrices, vectors, systems of linear equations, eigenvalues and their uses in engineering and data science.",
            "lec",
        ),
        ("2500", "Multivariable Calculus", "Partial derivatives, multiple integrals and vector calculus.", "lec"),
        (
            "2860",
            "Differential Equations",
            "First and second order differential equations, Laplace transforms and systems, with models from engineering.",
            "lec",
        ),
        (
            "3100",
            "Probability and Statistics",
            "Probability, random variables, distributions, estimation and hypothesis testing.",
            "lec",
        ),
    ],
    "PHYS": [
        (
            "1250",
            "Engineering Physics I",
            "Mechanics: motion, forces, energy, momentum and rotation, with weekly experiments in the lab.",
            "lab",
        ),
        (
            "1750",
            "Engineering Physics II",
            "Electricity and magnetism: charges, fields, circuits and electromagnetic waves, with lab.",
            "lab",
        ),
        ("2100", "Modern Physics", "Relativity, quantum mechanics, atoms and nuclei.", "lec"),
        (
            "2300",
            "Astronomy",
            "The solar system, stars, galaxies and the history of the universe, for students of any major.",
            "lec",
        ),
    ],
    "CHEM": [
        (
            "1100",
            "General Chemistry I",
            "Atoms, molecules, chemical reactions, stoichiometry and the periodic table, with lab.",
            "lab",
        ),
        (
            "1200",
            "General Chemistry II",
            "Kinetics, equilibrium, acids and bases and electrochemistry, with lab.",
            "lab",
        ),
        ("2100", "Organic Chemistry", "The chemistry of carbon compounds: structure, reactions and synthesis.", "lab"),
        (
            "2500",
            "Environmental Chemistry",
            "Chemistry of air, water and soil pollution and how it is measured.",
            "lec",
        ),
    ],
    "BIOL": [
        (
            "1100",
            "Cell Biology",
            "The structure and function of the cell, DNA, proteins and genetics, with lab.",
            "lab",
        ),
        (
            "1200",
            "Human Anatomy and Physiology",
            "The systems of the human body and how they work together, with lab dissections.",
            "lab",
        ),
        ("2100", "Genetics", "Inheritance, genes, mutations, genetic engineering and genomics.", "lec"),
        ("2300", "Microbiology", "Bacteria, viruses and fungi, infection and immunity, with lab.", "lab"),
        (
            "2600",
            "Ecology",
            "How living things interact with each other and their environment, and the science of conservation.",
            "lec",
        ),
    ],
    "ECON": [
        (
            "1100",
            "Principles of Microeconomics",
            "Supply and demand, markets, prices, competition and how households and firms make choices.",
            "lec",
        ),
        (
            "1200",
            "Principles of Macroeconomics",
            "Inflation, unemployment, interest rates, economic growth and government policy.",
            "lec",
        ),
        (
            "2300",
            "Behavioral Economics",
            "Why people make irrational economic choices, with experiments and games in class.",
            "sem",
        ),
        ("3100", "Economics of Technology", "How technology changes markets, jobs and productivity.", "lec"),
    ],
    "ENGL": [
        (
            "1100",
            "English I: Writing and Rhetoric",
            "College writing: reading critically, building an argument, revising drafts and citing sources.",
            "sem",
        ),
        ("1500", "English II: Literature", "Reading and writing about short stories, poems and plays.", "sem"),
        (
            "2200",
            "Technical Writing",
            "Writing reports, proposals, instructions and presentations for engineers and designers.",
            "sem",
        ),
        ("2500", "Creative Writing", "Writing fiction and poetry in a workshop, with feedback from classmates.", "sem"),
        ("3000", "Science Fiction", "Novels and films that imagine the future of technology and society.", "sem"),
    ],
    "HIST": [
        (
            "1100",
            "United States History",
            "The United States from the colonies to the present: revolution, civil war, industry and civil rights.",
            "lec",
        ),
        (
            "2100",
            "History of Technology",
            "How inventions from the steam engine to the internet changed the way people live and work.",
            "lec",
        ),
        ("2300", "World History", "Empires, trade and exchange across the world since 1500.", "lec"),
        ("2800", "History of Boston", "The city around us from its founding to today, with walking tours.", "sem"),
    ],
    "PSYC": [
        (
            "1100",
            "Introduction to Psychology",
            "The science of behaviour and the mind: the brain, learning, memory, emotion and mental health.",
            "lec",
        ),
        (
            "2200",
            "Social Psychology",
            "How people influence each other: attitudes, persuasion, groups and prejudice.",
            "lec",
        ),
        ("2500", "Cognitive Psychology", "Perception, attention, memory and decision making.", "lec"),
        (
            "3100",
            "Positive Psychology",
            "The science of happiness, well-being, resilience and stress management.",
            "sem",
        ),
    ],
    "PHIL": [
        (
            "1100",
            "Introduction to Philosophy",
            "Big questions about knowledge, mind, freedom and what we ought to do.",
            "sem",
        ),
        ("2100", "Ethics", "Theories of right and wrong and how they apply to hard cases.", "sem"),
        (
            "2400",
            "Ethics of Artificial Intelligence",
            "Bias, privacy, responsibility and the future of work in a world of intelligent machines.",
            "sem",
        ),
        (
            "2600",
            "Logic and Critical Thinking",
            "Recognising good and bad arguments, fallacies and formal logic.",
            "lec",
        ),
    ],
    "SOCL": [
        ("1100", "Introduction to Sociology", "Society, culture, social class, race, gender and institutions.", "lec"),
        ("2200", "Urban Sociology", "Cities, neighbourhoods, housing and inequality.", "sem"),
        ("2500", "Sociology of Work", "Jobs, careers, labour unions and how work is changing.", "sem"),
    ],
    "COMM": [
        ("1100", "Public Speaking", "Preparing and delivering speeches and presentations with confidence.", "sem"),
        (
            "2100",
            "Interpersonal Communication",
            "Listening, conflict and communication in relationships and teams.",
            "sem",
        ),
        (
            "2500",
            "Media and Society",
            "News, social media and entertainment and their influence on public life.",
            "lec",
        ),
    ],
    "SPAN": [
        ("1100", "Elementary Spanish I", "Speaking, listening, reading and writing Spanish for beginners.", "sem"),
        (
            "1200",
            "Elementary Spanish II",
            "Continued practice in conversation and grammar for everyday situations.",
            "sem",
        ),
        ("2100", "Intermediate Spanish", "Conversation, culture and reading in Spanish.", "sem"),
    ],
    "ARTS": [
        ("1100", "Drawing I", "Observational drawing: line, value, perspective and the figure.", "studio"),
        ("1300", "Photography", "Digital photography: the camera, light, composition and editing.", "studio"),
        ("2100", "Art History: Modern Art", "Painting, sculpture and design from Impressionism to today.", "lec"),
        (
            "2400",
            "Music Appreciation",
            "Listening to and understanding music from classical to jazz and hip hop.",
            "lec",
        ),
    ],
}

# Subjects whose courses count as Humanities and Social Sciences electives (attribute HSS).
HSS_SUBJECTS = frozenset({"ECON", "ENGL", "HIST", "PSYC", "PHIL", "SOCL", "COMM", "SPAN", "ARTS"})
