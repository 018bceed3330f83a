//! The samples of every format, written from each format's documented shape with bor's
//! tool names.

/// What a sample's markup is.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// Tool-call markup: removed and counted.
    Tool,
    /// Call syntax naming one of bor's tools: removed and counted; this text (the same
    /// call naming another tool) is the user's content and stays.
    Call { foreign: &'static str },
    /// Reasoning with these words: sent as thinking.
    Reasoning(&'static str),
    /// An answer wrapper around these words: unwrapped.
    Answer(&'static str),
    /// Turn framing: dropped, not counted.
    Framing,
}

/// Where a sample is placed among text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// After a sentence and before the next, on one line.
    Inline,
    /// On lines of its own.
    Lines,
    /// First in the message.
    MessageStart,
    /// Last in the message (and tool markup that runs to the end of the message).
    MessageEnd,
}

#[derive(Debug)]
pub struct Sample {
    /// The registry family (`Family::name`) that must catch it.
    pub family: &'static str,
    pub markup: &'static str,
    pub kind: Kind,
    pub place: Place,
}

const fn sample(family: &'static str, markup: &'static str, kind: Kind, place: Place) -> Sample {
    Sample {
        family,
        markup,
        kind,
        place,
    }
}

use Kind::{Answer, Call, Framing, Reasoning, Tool};
use Place::{Inline, Lines, MessageEnd, MessageStart};

pub const WHY: &str = "We check the refund chunk first.";
pub const REPLY: &str = "The refund window is 30 days.";

pub const SAMPLES: &[Sample] = &[
    // Reasoning.
    sample(
        "think tags (DeepSeek-R1, Qwen3, GLM, MiniMax, Kimi, Nemotron, …)",
        "<think>We check the refund chunk first.</think>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "thinking tags (Apriel 1.5)",
        "<thinking>We check the refund chunk first.</thinking>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "reasoning tags",
        "<reasoning>We check the refund chunk first.</reasoning>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "Mistral Magistral / Ministral think",
        "[THINK]We check the refund chunk first.[/THINK]",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "Kimi-VL think",
        "◁think▷We check the refund chunk first.◁/think▷",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "Cohere Command A thinking",
        "<|START_THINKING|>We check the refund chunk first.<|END_THINKING|>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "ByteDance Seed think",
        "<seed:think>We check the refund chunk first.</seed:think>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "Gemma 4 thought channel",
        "<|channel>thought\nWe check the refund chunk first.<channel|>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "OpenThoughts / Bespoke thought",
        "<|begin_of_thought|>We check the refund chunk first.<|end_of_thought|>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "Apertus inner monologue",
        "<|inner_prefix|>We check the refund chunk first.<|inner_suffix|>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "MiniMax M3 think",
        "<mm:think>We check the refund chunk first.</mm:think>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "K2 Horizon think",
        "<ifm|think_fast>We check the refund chunk first.</ifm|think_fast>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "Kimi K3 think section",
        "<|open|>think<|sep|>We check the refund chunk first.<|close|>think<|sep|>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "Solar Open think",
        "<|think|>We check the refund chunk first.<|end|>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "Hunyuan 3 think, labelled tokens",
        "<think:opensource>We check the refund chunk first.</think:opensource>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "Solar Open 2 think",
        "<|think:start|>We check the refund chunk first.<|think:end|>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "Inkling thinking block",
        "<|content_thinking|>We check the refund chunk first.<|end_message|>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "openPangu think",
        "[unused16]We check the refund chunk first.[unused17]",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "Muse Glimmer self channel",
        "to=self<|message|>We check the refund chunk first.<|eom|>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "gpt-oss analysis channel",
        "<|channel|>analysis<|message|>We check the refund chunk first.<|end|>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "gpt-oss analysis channel",
        "<|channel|> analysis<|message|> We check the refund chunk first.<|end|>",
        Reasoning(WHY),
        Inline,
    ),
    sample(
        "gpt-oss analysis, special tokens decoded away",
        "analysisWe check the refund chunk first.assistantfinal",
        Reasoning(WHY),
        MessageStart,
    ),
    // Answer wrappers.
    sample(
        "Granite / ERNIE response",
        "<response>The refund window is 30 days.</response>",
        Answer(REPLY),
        Inline,
    ),
    sample(
        "answer tags (Hunyuan)",
        "<answer>The refund window is 30 days.</answer>",
        Answer(REPLY),
        Inline,
    ),
    sample(
        "Cohere Command R7B response",
        "<|START_RESPONSE|>The refund window is 30 days.<|END_RESPONSE|>",
        Answer(REPLY),
        Inline,
    ),
    sample(
        "Cohere Command A text",
        "<|START_TEXT|>The refund window is 30 days.<|END_TEXT|>",
        Answer(REPLY),
        Inline,
    ),
    sample(
        "OpenThoughts / Bespoke solution",
        "<|begin_of_solution|>The refund window is 30 days.<|end_of_solution|>",
        Answer(REPLY),
        Inline,
    ),
    sample(
        "Apriel 1.6 final response",
        "[BEGIN FINAL RESPONSE]\nThe refund window is 30 days.\n[END FINAL RESPONSE]",
        Answer(REPLY),
        Inline,
    ),
    sample(
        "Kimi K3 response section",
        "<|open|>response<|sep|>The refund window is 30 days.<|close|>response<|sep|>",
        Answer(REPLY),
        Inline,
    ),
    sample(
        "Inkling text block",
        "<|content_text|>The refund window is 30 days.<|end_message|>",
        Answer(REPLY),
        Inline,
    ),
    sample(
        "Muse Glimmer user channel",
        "to=user<|message|>The refund window is 30 days.<|eot|>",
        Answer(REPLY),
        Inline,
    ),
    sample(
        "gpt-oss final channel and preamble",
        "<|channel|>final<|message|>The refund window is 30 days.<|return|>",
        Answer(REPLY),
        Inline,
    ),
    sample(
        "gpt-oss final channel and preamble",
        "<|channel|> final<|message|> The refund window is 30 days.<|end|>",
        Answer(REPLY),
        Inline,
    ),
    // Tool-call markup.
    sample(
        "Hermes / Qwen / GLM tool call",
        "<tool_call>\n{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}\n</tool_call>",
        Tool,
        Inline,
    ),
    sample(
        "Hermes / Qwen / GLM tool call",
        "<tool_call>search_documents\n<arg_key>query</arg_key>\n<arg_value>refunds</arg_value>\n</tool_call>",
        Tool,
        Inline,
    ),
    sample(
        "tool_calls block (Apriel, Jamba, Hunyuan, MiniMax M1)",
        "<tool_calls>[{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}]</tool_calls>",
        Tool,
        Inline,
    ),
    sample(
        "tool_calls block (Apriel, Jamba, Hunyuan, MiniMax M1)",
        "<tool_calls>\n<tool_call>search_documents<tool_sep>\n<arg_key>query</arg_key>\n<arg_value>refunds</arg_value>\n</tool_call>\n</tool_calls>",
        Tool,
        Inline,
    ),
    sample(
        "function_call block (Hermes, Granite 20B FC)",
        "<function_call>{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}</function_call>",
        Tool,
        Inline,
    ),
    sample(
        "function_call block (Hermes, Granite 20B FC)",
        "<function_call> {\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}",
        Tool,
        MessageEnd,
    ),
    sample(
        "OLMo 3 / legacy function_calls",
        "<function_calls>search_documents(query=\"refunds\")</function_calls>",
        Tool,
        Inline,
    ),
    sample(
        "function tag (Qwen3-Coder, Functionary, Hermes, MiniCPM 5)",
        "<function=search_documents>\n<parameter=query>\nrefunds\n</parameter>\n</function>",
        Tool,
        Inline,
    ),
    sample(
        "function tag (Qwen3-Coder, Functionary, Hermes, MiniCPM 5)",
        "<function=search_documents>{\"query\": \"refunds\"}</function>",
        Tool,
        Inline,
    ),
    sample(
        "function tag (Qwen3-Coder, Functionary, Hermes, MiniCPM 5)",
        "<function name=\"search_documents\"><param name=\"query\">refunds</param></function>",
        Tool,
        Inline,
    ),
    sample(
        "hallucinated tool result",
        "<tool_response>\n{\"hits\": []}\n</tool_response>",
        Tool,
        Inline,
    ),
    sample(
        "Gemma 4 hallucinated tool response",
        "<|tool_response>response:search_documents{hits:[]}<tool_response|>",
        Tool,
        Inline,
    ),
    sample(
        "FunctionGemma hallucinated function response",
        "<start_function_response>response:search_documents{hits:[]}<end_function_response>",
        Tool,
        Inline,
    ),
    sample(
        "DeepSeek hallucinated tool outputs",
        "<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>{\"hits\": []}<｜tool▁output▁end｜><｜tool▁outputs▁end｜>",
        Tool,
        Inline,
    ),
    sample(
        "DeepSeek hallucinated tool output",
        "<｜tool▁output▁begin｜>{\"hits\": []}<｜tool▁output▁end｜>",
        Tool,
        Inline,
    ),
    sample(
        "Llama 3.1 python_tag",
        "<|python_tag|>search_documents.call(query=\"refunds\")<|eom_id|>",
        Tool,
        MessageEnd,
    ),
    sample(
        "Llama 4 python_start",
        "<|python_start|>[search_documents(query=\"refunds\")]<|python_end|>",
        Tool,
        Inline,
    ),
    sample(
        "Mistral TOOL_CALLS",
        "[TOOL_CALLS]search_documents[ARGS]{\"query\": \"refunds\"}",
        Tool,
        MessageEnd,
    ),
    sample(
        "Mistral TOOL_CALLS",
        "[TOOL_CALLS]search_documents[CALL_ID]a1B2c3D4e[ARGS]{\"query\": \"refunds\"}",
        Tool,
        MessageEnd,
    ),
    sample(
        "Mistral TOOL_CALLS",
        "[TOOL_CALLS][{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}, \"id\": \"a1B2c3D4e\"}]",
        Tool,
        MessageEnd,
    ),
    sample(
        "Mistral TOOL_RESULTS",
        "[TOOL_RESULTS]{\"hits\": []}[/TOOL_RESULTS]",
        Tool,
        Inline,
    ),
    sample(
        "Granite tool_call token",
        "<|tool_call|>[{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}]",
        Tool,
        MessageEnd,
    ),
    sample(
        "Gemma 4 tool call",
        "<|tool_call>call:search_documents{query:<|\"|>refunds<|\"|>}<tool_call|>",
        Tool,
        Inline,
    ),
    sample(
        "Kimi K2 tool-call section",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.search_documents:0<|tool_call_argument_begin|>{\"query\": \"refunds\"}<|tool_call_end|><|tool_calls_section_end|>",
        Tool,
        Inline,
    ),
    sample(
        "Kimi K2 tool call",
        "<|tool_call_begin|>functions.search_documents:0<|tool_call_argument_begin|>{\"query\": \"refunds\"}<|tool_call_end|>",
        Tool,
        Inline,
    ),
    sample(
        "DeepSeek V3 / R1 / Step 3 tool calls",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search_documents\n```json\n{\"query\": \"refunds\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        Tool,
        Inline,
    ),
    sample(
        "DeepSeek V3 / R1 / Step 3 tool calls",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search_documents<｜tool▁sep｜>{\"query\": \"refunds\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        Tool,
        Inline,
    ),
    sample(
        "DeepSeek V3 / R1 / Step 3 tool calls",
        "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"search_documents\"><steptml:parameter name=\"query\">refunds</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
        Tool,
        Inline,
    ),
    sample(
        "DeepSeek tool call",
        "<｜tool▁call▁begin｜>search_documents<｜tool▁sep｜>{\"query\": \"refunds\"}<｜tool▁call▁end｜>",
        Tool,
        Inline,
    ),
    sample(
        "DeepSeek DSML",
        "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"search_documents\">\n<｜DSML｜parameter name=\"query\" string=\"true\">refunds</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
        Tool,
        Inline,
    ),
    sample(
        "DeepSeek DSML",
        "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"list_documents\">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
        Tool,
        Inline,
    ),
    sample(
        "GigaChat 3.5 GCML tool calls",
        "<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"search_documents\">\n<｜GCML｜parameter name=\"query\" string=\"true\">refunds</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>",
        Tool,
        Inline,
    ),
    sample(
        "gpt-oss tool call",
        "<|channel|>commentary to=functions.search_documents <|constrain|>json<|message|>{\"query\":\"refunds\"}<|call|>",
        Tool,
        Inline,
    ),
    sample(
        "gpt-oss tool call",
        "<|start|>assistant to=functions.search_documents<|channel|>commentary json<|message|>{\"query\":\"refunds\"}<|call|>",
        Tool,
        Inline,
    ),
    sample(
        "gpt-oss tool call",
        "<|start|> assistant to=functions.search_documents<|channel|> commentary <|constrain|>  json<|message|> {\"query\":\"refunds\"}<|call|>",
        Tool,
        Inline,
    ),
    sample(
        "gpt-oss tool call, recipient in the role header",
        "to=functions.search_documents<|channel|>commentary json<|message|>{\"query\":\"refunds\"}<|call|>",
        Tool,
        Inline,
    ),
    sample(
        "gpt-oss tool call, special tokens decoded away",
        "assistantcommentary to=functions.search_documents json{\"query\":\"refunds\"}",
        Tool,
        MessageEnd,
    ),
    sample(
        "MiniMax M2 tool call",
        "<minimax:tool_call>\n<invoke name=\"search_documents\">\n<parameter name=\"query\">refunds</parameter>\n</invoke>\n</minimax:tool_call>",
        Tool,
        Inline,
    ),
    sample(
        "MiniMax M3 tool call",
        "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"search_documents\">]<]minimax[>[<query>refunds]<]minimax[>[</query>]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
        Tool,
        Inline,
    ),
    sample(
        "ByteDance Seed tool call",
        "<seed:tool_call>\n<function=search_documents>\n<parameter=query>refunds</parameter>\n</function>\n</seed:tool_call>",
        Tool,
        Inline,
    ),
    sample(
        "InternLM action",
        "<|action_start|><|plugin|>\n{\"name\": \"search_documents\", \"parameters\": {\"query\": \"refunds\"}}<|action_end|>",
        Tool,
        Inline,
    ),
    sample(
        "Nemotron TOOLCALL",
        "<TOOLCALL>[{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}]</TOOLCALL>",
        Tool,
        Inline,
    ),
    sample(
        "LFM2 tool call",
        "<|tool_call_start|>[search_documents(query=\"refunds\")]<|tool_call_end|>",
        Tool,
        Inline,
    ),
    sample(
        "Cohere Command A action",
        "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"search_documents\", \"parameters\": {\"query\": \"refunds\"}}\n]<|END_ACTION|>",
        Tool,
        Inline,
    ),
    sample(
        "Apertus tool calls",
        "<|tools_prefix|>[{\"search_documents\": {\"query\": \"refunds\"}}]<|tools_suffix|>",
        Tool,
        Inline,
    ),
    sample(
        "FunctionGemma function call",
        "<start_function_call>call:search_documents{query:<escape>refunds<escape>}<end_function_call>",
        Tool,
        Inline,
    ),
    sample(
        "GigaChat 3 / 3.1 function call",
        "function call<|role_sep|>\n{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}",
        Tool,
        MessageEnd,
    ),
    sample(
        "GigaChat 3 / 3.1 function call",
        "<|function_call|>{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}",
        Tool,
        MessageEnd,
    ),
    sample(
        "Kimi K3 tools section",
        "<|open|>tools<|sep|><|open|>call tool=\"search_documents\" index=\"1\"<|sep|><|open|>argument key=\"query\" type=\"string\"<|sep|>refunds<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
        Tool,
        Inline,
    ),
    sample(
        "K2 Horizon tool-call group",
        "<ifm|tool_calls><ifm|tool_call>search_documents<ifm|arg_key>query</ifm|arg_key><ifm|arg_value>refunds</ifm|arg_value></ifm|tool_call></ifm|tool_calls>",
        Tool,
        Inline,
    ),
    sample(
        "K2 Horizon tool call",
        "<ifm|tool_call>{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}</ifm|tool_call>",
        Tool,
        Inline,
    ),
    sample(
        "Inkling tool invocation",
        "<|content_invoke_tool_json|>{\"name\":\"search_documents\",\"args\":{\"query\":\"refunds\"}}<|end_message|>",
        Tool,
        Inline,
    ),
    sample(
        "Solar Open tool-call section",
        "<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>search_documents<|tool_call:args|>{\"query\": \"refunds\"}<|tool_call:end|><|calls|>",
        Tool,
        Inline,
    ),
    sample(
        "Solar Open tool call",
        "<|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>search_documents<|tool_call:args|>{\"query\": \"refunds\"}<|tool_call:end|>",
        Tool,
        Inline,
    ),
    sample(
        "tool_calls block (Apriel, Jamba, Hunyuan, MiniMax M1)",
        "<tool_calls:opensource>\n<tool_call:opensource>search_documents<tool_sep:opensource>\n<arg_key:opensource>query</arg_key:opensource>\n<arg_value:opensource>refunds</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>",
        Tool,
        Inline,
    ),
    sample(
        "Solar Open 2 tool call",
        "<|tool_call:start|>search_documents\n<|tool_arg:start|>query<|tool_arg:value|>refunds<|tool_arg:end|>\n<|tool_call:end|>",
        Tool,
        Inline,
    ),
    sample(
        "dots function call",
        "<dots_function_call>\n<invoke name=\"search_documents\">\n<parameter name=\"query\">refunds</parameter>\n</invoke>\n</dots_function_call>",
        Tool,
        Inline,
    ),
    sample(
        "LongCat tool call",
        "<longcat_tool_call>search_documents\n<longcat_arg_key>query</longcat_arg_key>\n<longcat_arg_value>refunds</longcat_arg_value>\n</longcat_tool_call>",
        Tool,
        Inline,
    ),
    sample(
        "Muse Glimmer function calls",
        "<atem:function_calls>\n<atem:invoke name=\"search_documents\">\n<atem:parameter name=\"query\">refunds</atem:parameter>\n</atem:invoke>\n</atem:function_calls>",
        Tool,
        Inline,
    ),
    sample(
        "openPangu tool call",
        "[unused11][{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}][unused12]",
        Tool,
        Inline,
    ),
    sample(
        "Cohere Command R action",
        "Action: ```json\n[\n    {\"tool_name\": \"search_documents\", \"parameters\": {\"query\": \"refunds\"}}\n]\n```",
        Tool,
        Lines,
    ),
    sample(
        "Cohere Command R action",
        "Action:\n```json\n[{\"tool_name\": \"search_documents\", \"parameters\": {\"query\": \"refunds\"}}]\n```",
        Tool,
        Lines,
    ),
    sample(
        "tool_code / tool_call fence",
        "```tool_code\nsearch_documents(query=\"refunds\")\n```",
        Tool,
        Inline,
    ),
    sample(
        "tool_code / tool_call fence",
        "```tool_call\n{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}\n```",
        Tool,
        Lines,
    ),
    sample(
        "Phi-4-mini / FireFunction functools",
        "functools[{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}]",
        Tool,
        MessageEnd,
    ),
    // Call syntax: markup only when it names one of bor's tools.
    sample(
        "bare JSON call",
        "{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}",
        Call {
            foreign: "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}",
        },
        Inline,
    ),
    sample(
        "bare JSON call",
        "{\"type\": \"function\", \"name\": \"search_documents\", \"parameters\": {\"query\": \"refunds\"}}",
        Call {
            foreign: "{\"type\": \"function\", \"name\": \"get_weather\", \"parameters\": {}}",
        },
        Inline,
    ),
    sample(
        "bare JSON call",
        "{\"tool_call\": {\"name\": \"read_document\", \"arguments\": {\"document_id\": 3}}}",
        Call {
            foreign: "{\"tool_call\": {\"name\": \"get_weather\", \"arguments\": {}}}",
        },
        Inline,
    ),
    sample(
        "bare JSON call",
        "{\"tool_calls\": [{\"name\": \"list_documents\", \"arguments\": {}}, {\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}]}",
        Call {
            foreign: "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {}}]}",
        },
        Inline,
    ),
    sample(
        "pythonic or JSON call list",
        "[search_documents(query=\"refunds\"), list_documents()]",
        Call {
            foreign: "[get_weather(city=\"Oslo\")]",
        },
        Inline,
    ),
    sample(
        "pythonic or JSON call list",
        "[{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}]",
        Call {
            foreign: "[{\"name\": \"get_weather\", \"arguments\": {}}]",
        },
        Inline,
    ),
    sample(
        "Gemma 4 call, delimiters decoded away",
        "call:search_documents{query:refunds}",
        Call {
            foreign: "call:get_weather{city:Oslo}",
        },
        Inline,
    ),
    sample(
        "JSON call fence",
        "```json\n{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}\n```",
        Call {
            foreign: "```json\n{\"name\": \"get_weather\", \"arguments\": {}}\n```",
        },
        Lines,
    ),
    sample(
        "JSON call fence",
        "```\n[{\"name\": \"search_documents\", \"parameters\": {\"query\": \"refunds\"}}]\n```",
        Call {
            foreign: "```\n[{\"name\": \"get_weather\", \"parameters\": {}}]\n```",
        },
        Lines,
    ),
    sample(
        "Hermes tag around a JSON call",
        "<tools>{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}</tools>",
        Call {
            foreign: "<tools>{\"name\": \"get_weather\", \"arguments\": {}}</tools>",
        },
        Inline,
    ),
    sample(
        "Hermes tag around a JSON call",
        "<json>\n{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}\n</json>",
        Call {
            foreign: "<json>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</json>",
        },
        Inline,
    ),
    sample(
        "GigaChat 3 function call, special tokens decoded away",
        "function call{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}",
        Call {
            foreign: "function call{\"name\": \"get_weather\", \"arguments\": {}}",
        },
        Inline,
    ),
    sample(
        "Muse Glimmer recipient header",
        "to=search_documents<|message|>",
        Call {
            foreign: "to=get_weather<|message|>",
        },
        Inline,
    ),
    sample(
        "Functionary v3.2 answer recipient",
        "all\n",
        Framing,
        MessageStart,
    ),
    sample(
        "Functionary v3.2 answer recipient, later parts",
        ">>>all\n",
        Framing,
        Inline,
    ),
    sample(
        "Functionary v3.2 tool recipient",
        ">>>search_documents\n{\"query\": \"refunds\"}",
        Call {
            foreign: ">>>get_weather\n{\"city\": \"Oslo\"}",
        },
        Inline,
    ),
    sample(
        "Functionary v3.2 tool recipient, first in the message",
        "search_documents\n{\"query\": \"refunds\"}",
        Call {
            foreign: "get_weather\n{\"city\": \"Oslo\"}",
        },
        MessageStart,
    ),
    // Turn framing.
    sample("end-of-turn tokens", "<|im_end|>", Framing, Inline),
    sample("end-of-turn tokens", "<turn|>", Framing, Inline),
    sample("end-of-turn tokens", "<|eot|>", Framing, Inline),
    sample("end-of-turn tokens", "<|role_end|>", Framing, Inline),
    sample("end-of-turn tokens", "<|end_message|>", Framing, Inline),
    sample(
        "end-of-turn tokens",
        "<|close|>message<|sep|>",
        Framing,
        Inline,
    ),
    sample("end-of-turn tokens", "<|message_sep|>", Framing, Inline),
    sample("end-of-turn tokens", "<seed:eos>", Framing, Inline),
    sample(
        "end-of-turn tokens",
        "<｜end▁of▁sentence｜>",
        Framing,
        Inline,
    ),
    sample(
        "turn headers",
        "<|im_assistant|>assistant<|im_middle|>",
        Framing,
        Inline,
    ),
    sample("turn headers", "<｜Assistant｜>", Framing, Inline),
    sample("turn headers", "<|turn>model", Framing, Inline),
    sample("turn headers", "<start_of_turn>model", Framing, Inline),
    sample("turn headers", "<|CHATBOT_TOKEN|>", Framing, Inline),
    sample("turn headers", "<|message_model|>", Framing, Inline),
    sample(
        "turn headers",
        "<|begin|>assistant<|content|>",
        Framing,
        Inline,
    ),
    sample(
        "turn headers",
        "<|channel|>commentary to=assistant",
        Framing,
        Inline,
    ),
    sample("end-of-sequence tags", "</s>", Framing, MessageEnd),
    sample("end-of-sequence tags", "[e~[", Framing, MessageEnd),
];
