"""Realistic synthetic calls, for the benchmark, the storage tests and the demo.

Shaped like the Pipecat captures: a ~1.5 KB system prompt, a tools schema,
Telugu/Hindi/English speech, and a tool call every few turns whose slot reads
IN_PROGRESS in one request and is overwritten in place with the result in
the next. Bodies are compact JSON with raw UTF-8, as the OpenAI SDK sends.
"""

import json
import random

SYSTEM_PROMPT = (
    "You are Sita, the receptionist of Sri Lakshmi Dental Clinic in Vijayawada. "
    "Callers speak Telugu, Hindi or English; always answer in the caller's language, briefly, "
    "in one or two short sentences suitable for speech. Never read out lists longer than three "
    "items. Use check_availability before offering any slot and never invent free times. Use "
    "book_appointment only after the caller has confirmed the day, the time and their full name, "
    "and read the confirmation number back digit by digit. Use cancel_appointment only when the "
    "caller gives a confirmation number. If a tool is still running, say you are checking and "
    "wait for its result; do not call it again. Opening hours: Monday to Friday 9:00-13:00 and "
    "15:00-19:00, Saturday 9:00-13:00, closed on Sunday. Fees: consultation 300 rupees, "
    "cleaning 800 rupees, filling from 1200 rupees. The clinic is on MG Road near Benz Circle, "
    "first floor above the pharmacy; parking is behind the building. For pain with swelling or "
    "fever, advise the caller to come in today and offer the earliest slot. Never give medical "
    "advice beyond that. If the caller asks for a human, say that the doctor's assistant will "
    "call back within the hour and take their number. Keep the caller's name and number private."
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "check_availability",
            "description": "Look up free appointment slots for a given day in the clinic calendar.",
            "parameters": {
                "type": "object",
                "properties": {
                    "day": {"type": "string", "description": "Day of the week, in Telugu."},
                    "part_of_day": {"type": "string", "enum": ["morning", "afternoon", "evening"]},
                },
                "required": ["day"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "book_appointment",
            "description": "Book an appointment slot for a patient.",
            "parameters": {
                "type": "object",
                "properties": {
                    "day": {"type": "string"},
                    "time": {"type": "string", "description": "Slot start time, HH:MM."},
                    "patient_name": {"type": "string"},
                },
                "required": ["day", "time", "patient_name"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "cancel_appointment",
            "description": "Cancel a booked appointment by its confirmation number.",
            "parameters": {
                "type": "object",
                "properties": {"confirmation": {"type": "string"}},
                "required": ["confirmation"],
            },
        },
    },
]

CALLER_LINES = [
    "నమస్తే, శుక్రవారం మధ్యాహ్నం అపాయింట్‌మెంట్ ఖాళీ ఉందా?",
    "అలాగే, మీరు శనివారం కూడా తెరిచి ఉంటారా?",
    "15:30 బుక్ చేయండి. నా పేరు రవి కుమార్.",
    "नमस्ते, क्या कल सुबह कोई समय खाली है?",
    "Can I move my cleaning to Monday morning?",
    "నా దంతం చాలా నొప్పిగా ఉంది, ఈ రోజు రావచ్చా?",
    "फीस कितनी है?",
    "Sorry, could you repeat the time?",
]
AGENT_LINES = [
    "శుక్రవారం మధ్యాహ్నం 3:00 లేదా 3:30కి ఖాళీ ఉంది. ఏ సమయం కావాలి?",
    "శనివారం మేము ఉదయం 9 నుండి మధ్యాహ్నం 1 వరకు తెరిచి ఉంటాము.",
    "जी हाँ, कल सुबह 10:30 बजे खाली है।",
    "Monday at 9:30 is free. Shall I book it?",
    "సరే రవి గారు, మీ అపాయింట్‌మెంట్ బుక్ అయింది.",
]
DAYS = ["శుక్రవారం", "శనివారం", "సోమవారం", "మంగళవారం"]


def synthetic_call(turns: int, seed: int = 0) -> list[bytes]:
    """The request bodies of one call of `turns` model requests."""
    rng = random.Random(seed)
    messages: list[dict] = [{"role": "system", "content": SYSTEM_PROMPT}]
    pending: tuple[int, str, str] | None = None  # (index of the tool message, name, day)
    bodies = []
    for number in range(1, turns + 1):
        if pending is not None:
            index, name, day = pending
            result = {"outcome": "produced", "day": day, "free": ["15:00", "15:30"]}
            if name == "book_appointment":
                result = {"outcome": "booked", "day": day, "confirmation": f"APT-{rng.randrange(10**4):04d}"}
            messages[index] = {**messages[index], "content": json.dumps(result, ensure_ascii=False)}
            pending = None
        elif number % 4 == 3:
            name = rng.choice(["check_availability", "book_appointment"])
            day = rng.choice(DAYS)
            call_id = f"call_{rng.getrandbits(120):030x}"[:29]
            arguments = json.dumps({"day": day, "part_of_day": "afternoon"}, ensure_ascii=False)
            messages.append(
                {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": call_id, "function": {"name": name, "arguments": arguments}, "type": "function"}
                    ],
                }
            )
            messages.append({"role": "tool", "content": "IN_PROGRESS", "tool_call_id": call_id})
            pending = (len(messages) - 1, name, day)
        else:
            if number > 1:
                messages.append({"role": "assistant", "content": rng.choice(AGENT_LINES)})
            messages.append({"role": "user", "content": rng.choice(CALLER_LINES)})
        body = {
            "messages": messages,
            "model": "gpt-4.1-mini",
            "stream": True,
            "stream_options": {"include_usage": True},
            "temperature": 0.3,
            "tools": TOOLS,
        }
        bodies.append(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    return bodies
