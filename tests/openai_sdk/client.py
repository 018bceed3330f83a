"""Drives bor's /v1 API with the official `openai` Python SDK and prints what the SDK
made of it, as one JSON object on stdout, for tests/openai_sdk to check.

    python client.py BASE_URL SCENARIO [QUESTION]   (complete-each: a JSON list of
                                                    [model, question] pairs)

Scenarios: models, stream, stream-async, complete, complete-each, leave, give-up.
Errors the SDK raises are reported (class, status, code, type, message), not raised.
"""

import asyncio
import json
import sys

import openai

API_KEY = "bor-takes-any-key"


def client(base_url, **options):
    return openai.OpenAI(base_url=base_url + "/v1", api_key=API_KEY, max_retries=0, **options)


def messages(question):
    return [
        {"role": "system", "content": "Ignored by bor."},
        {"role": "user", "content": question},
    ]


def error_report(error):
    report = {
        "class": type(error).__name__,
        "is_api_error": isinstance(error, openai.APIError),
        "is_status_error": isinstance(error, openai.APIStatusError),
        "message": getattr(error, "message", str(error)),
        "body": getattr(error, "body", None),
        "code": getattr(error, "code", None),
        "type": getattr(error, "type", None),
    }
    if isinstance(error, openai.APIStatusError):
        report["status"] = error.status_code
        report["retry_after"] = error.response.headers.get("retry-after")
        report["request_id"] = error.request_id
    return report


def chunk_report(chunk):
    choice = chunk.choices[0]
    extra = chunk.model_extra or {}
    delta_extra = choice.delta.model_extra or {}
    return {
        "id": chunk.id,
        "object": chunk.object,
        "model": chunk.model,
        "created": chunk.created,
        "role": choice.delta.role,
        "content": choice.delta.content,
        "reasoning_content": delta_extra.get("reasoning_content"),
        "finish_reason": choice.finish_reason,
        "bor": extra.get("bor"),
    }


def summary(chunks, error=None):
    return {
        "chunks": chunks,
        "content": "".join(c["content"] or "" for c in chunks),
        "reasoning": "".join(c["reasoning_content"] or "" for c in chunks),
        "error": error,
    }


def models(base_url, _question):
    bor = client(base_url)
    listed = bor.models.list()
    one = bor.models.retrieve("bor")
    scoped = bor.models.retrieve("bor/default")
    try:
        bor.models.retrieve("gpt-4o")
        missing = None
    except openai.APIError as error:
        missing = error_report(error)
    return {
        "ids": [model.id for model in listed.data],
        "retrieved": {"id": one.id, "object": one.object, "owned_by": one.owned_by,
                      "created": one.created},
        "scoped": scoped.id,
        "missing": missing,
    }


def stream(base_url, question):
    chunks = []
    try:
        for chunk in client(base_url).chat.completions.create(
            model="bor", messages=messages(question), stream=True
        ):
            chunks.append(chunk_report(chunk))
    except openai.APIError as error:
        return summary(chunks, error_report(error))
    return summary(chunks)


def stream_async(base_url, question):
    async def run():
        bor = openai.AsyncOpenAI(base_url=base_url + "/v1", api_key=API_KEY, max_retries=0)
        chunks = []
        try:
            response = await bor.chat.completions.create(
                model="bor", messages=messages(question), stream=True
            )
            async for chunk in response:
                chunks.append(chunk_report(chunk))
        except openai.APIError as error:
            return summary(chunks, error_report(error))
        finally:
            await bor.close()
        return summary(chunks)

    return asyncio.run(run())


def complete(base_url, question, model="bor"):
    try:
        completion = client(base_url).chat.completions.create(
            model=model, messages=messages(question)
        )
    except openai.APIError as error:
        return {"error": error_report(error)}
    choice = completion.choices[0]
    message_extra = choice.message.model_extra or {}
    return {
        "id": completion.id,
        "object": completion.object,
        "model": completion.model,
        "content": choice.message.content,
        "reasoning_content": message_extra.get("reasoning_content"),
        "finish_reason": choice.finish_reason,
        "usage": completion.usage and completion.usage.model_dump(),
        "bor": (completion.model_extra or {}).get("bor"),
        "error": None,
    }


def complete_each(base_url, cases):
    """One completion per `[model, question]` pair of the JSON list `cases`."""
    return {"results": [complete(base_url, q, model=m) for m, q in json.loads(cases)]}


def leave(base_url, question):
    """Reads the stream up to its first content, then closes it."""
    response = client(base_url).chat.completions.create(
        model="bor", messages=messages(question), stream=True
    )
    content = ""
    for chunk in response:
        content += chunk.choices[0].delta.content or ""
        if content:
            break
    response.close()
    return {"content": content}


def give_up(base_url, question):
    """Waits one second for a whole completion, then gives up."""
    try:
        client(base_url, timeout=1.0).chat.completions.create(
            model="bor", messages=messages(question)
        )
    except openai.APIError as error:
        return {"error": error_report(error)}
    return {"error": None}


SCENARIOS = {
    "models": models,
    "stream": stream,
    "stream-async": stream_async,
    "complete": complete,
    "complete-each": complete_each,
    "leave": leave,
    "give-up": give_up,
}

if __name__ == "__main__":
    base, scenario = sys.argv[1], sys.argv[2]
    asked = sys.argv[3] if len(sys.argv) > 3 else ""
    print(json.dumps({"sdk_version": openai.__version__, **SCENARIOS[scenario](base, asked)}))
