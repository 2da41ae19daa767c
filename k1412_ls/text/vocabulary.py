"""The shared request vocabulary: named rules that tag a request (English, Chinese, mixed).

One table serves two readers: the intent classifier (which tools to offer,
``core.intent``) and the evidence gate (what proof a run owes,
``core.evidence.requirements``). Each rule has a name, the tags it gives and
one regular expression, so a decision can always be explained by the rules
that fired.

Intent tags: ``artifact``, ``execution``, ``source``,
``report``, ``comparison``, ``process``, ``git``, ``memory``, ``delegation``,
``question``, ``greeting``.

Facet tags refine them for the evidence gate and the plan tool:
``analysis`` (inspect and explain; an inspection is enough proof),
``measurement`` (timings, speed, performance: figures must come from command
output), ``workspace`` (the request points at code or files of this
workspace, so answering it needs a look at them) and ``multistep``
(a sequence of steps: offer ``update_plan``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

INTENT_TAGS: frozenset[str] = frozenset({
    "artifact", "execution", "source", "report", "comparison", "process", "git", "memory", "delegation",
    "question", "greeting",
})
FACET_TAGS: frozenset[str] = frozenset({"analysis", "measurement", "workspace", "multistep", "tests", "build",
                                       "commit", "deletion", "lint", "change", "rename", "listing", "action"})
ALL_TAGS: frozenset[str] = INTENT_TAGS | FACET_TAGS

# File kinds shared by target extraction, the intent rules and the evidence rules.
SOURCE_EXTENSIONS: frozenset[str] = frozenset({
    "py", "pyw", "js", "mjs", "cjs", "ts", "tsx", "jsx", "sh", "bash", "zsh", "fish", "go", "rs", "c", "h",
    "cc", "cpp", "cxx", "hpp", "java", "kt", "kts", "rb", "php", "pl", "lua", "swift", "scala", "cs", "r",
    "jl", "dart", "ex", "exs", "erl", "hs", "ml", "clj", "sql", "ps1", "bat", "vue", "svelte", "zig", "nim",
})
REPORT_EXTENSIONS: frozenset[str] = frozenset({"md", "markdown", "txt", "rst", "html", "htm", "csv", "tsv", "json",
                                               "adoc", "tex", "org"})
DATA_EXTENSIONS: frozenset[str] = frozenset({
    "yaml", "yml", "toml", "ini", "cfg", "conf", "xml", "jsonl", "ndjson", "log", "lock", "ipynb", "css", "scss",
    "sass", "less", "svg", "env", "properties", "gradle", "mk", "proto", "graphql", "dockerfile", "tf",
})
FILE_EXTENSIONS: frozenset[str] = SOURCE_EXTENSIONS | REPORT_EXTENSIONS | DATA_EXTENSIONS
BARE_FILE_NAMES: frozenset[str] = frozenset({"Makefile", "Dockerfile", "Justfile", "Procfile", "Gemfile",
                                             "Rakefile", "Jenkinsfile", "Vagrantfile", "README", "CHANGELOG",
                                             "LICENSE", "CONTRIBUTING", "VERSION", "NOTICE", "AUTHORS"})
# "Node.js" and friends are technologies, not files.
NOT_FILES: frozenset[str] = frozenset({"node.js", "vue.js", "next.js", "nuxt.js", "react.js", "express.js",
                                       "angular.js", "three.js", "d3.js", "chart.js", "ember.js", "p5.js",
                                       "deno.js", "nest.js", "alpine.js", "backbone.js", "ext.js"})
REPORT_NAME_HINTS: tuple[str, ...] = ("report", "results", "result", "summary", "benchmark", "bench", "findings",
                                      "报告", "结果", "总结")


@dataclass(frozen=True)
class Rule:
    """A named vocabulary rule: when ``pattern`` matches a request, it gets ``tags``."""

    name: str
    tags: frozenset[str]
    pattern: re.Pattern[str]

    def matches(self, text: str) -> bool:
        """Whether the rule fires on ``text``."""
        return self.pattern.search(text) is not None


def _rule(name: str, tags: str, pattern: str) -> Rule:
    unknown = set(tags.split()) - ALL_TAGS
    if unknown:
        raise ValueError(f"rule {name} uses unknown tags {sorted(unknown)}")
    return Rule(name, frozenset(tags.split()), re.compile(pattern, re.IGNORECASE | re.MULTILINE))


_EXT = "|".join(sorted(FILE_EXTENSIONS, key=len, reverse=True))
# A file name as requests write it: hello.py, src/app/main.ts, ./data.csv, Makefile.
FILE_NAME = re.compile(
    r"(?<![A-Za-z0-9_./\\-])((?:\.{0,2}/)?(?:[A-Za-z0-9_-][A-Za-z0-9_.-]*/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*\.(?:"
    + _EXT + r")|" + "|".join(sorted(BARE_FILE_NAMES)) + r")(?![A-Za-z0-9_-])(?!\.[A-Za-z0-9])"
)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)

# Verbs and nouns reused by several rules.
_MAKE = r"(?:create|make(?!\s+sure)|write|generate|produce|build|add|save|output|export|dump|emit|put|scaffold|set\s*up|prepare)"
_CHANGE = (r"(?:fix|repair|modify|change|update|edit|refactor|rename|replace|remove|delete|implement|patch|"
           r"rewrite|convert|format|reformat|clean\s*up|migrate|port|translate|improve|optimi[sz]e|add)")
_CODE_NOUN = (r"(?:script|program|function|class|method|module|cli|command[- ]line tool|tool|app|application|"
              r"game|server|client|parser|library|package|endpoint|handler|component|snippet|algorithm|solver|"
              r"scraper|crawler|bot|utility|helper)")
_FILE_NOUN = r"(?:file|files|document|config|configuration|dataset|spreadsheet|page|readme|changelog|template)"
_ZH_CODE = r"(?:脚本|程序|函数|类|方法|模块|工具|应用|接口|组件|代码|爬虫|算法|服务)"

RULES: tuple[Rule, ...] = (
    # --- artifact: a concrete file must exist or change -------------------------------------------
    _rule("en.make-file", "artifact", rf"\b{_MAKE}\b(?:[^.?!\n]|\.(?=\w)){{0,60}}\b{_FILE_NOUN}\b"),
    _rule("en.make-named-file", "artifact",
          rf"\b{_MAKE}\b[^?!\n]{{0,80}}?(?:[A-Za-z0-9_-]\.(?:{_EXT})\b|\b(?:Makefile|Dockerfile)\b)"),
    _rule("en.save-to-file", "artifact",
          rf"\b(?:save|write|output|export|dump|store|put|redirect|print|log|append|record)\w*\b(?:[^.?!\n]|\.(?=\w)){{0,40}}"
          rf"\b(?:to|into|as|in)\s+(?:a\s+)?(?:new\s+)?(?:file\s+)?(?:called\s+|named\s+)?`?[A-Za-z0-9_./-]+\.(?:{_EXT})\b"),
    _rule("en.change-code", "artifact",
          rf"\b{_CHANGE}\b(?:[^.?!\n]|\.(?=\w)){{0,60}}(?:\b(?:bug|bugs|code|{_CODE_NOUN}|{_FILE_NOUN}|typo|test|tests|"
          rf"import|imports|docstrings?|comments?|type hints?|logging|error handling)\b|\.(?:{_EXT})\b)"),
    _rule("zh.make-file", "artifact", r"(?:创建|新建|生成|建立|写入|保存|导出|输出|写)[^。？！\n]{0,30}(?:文件|文档|配置|数据集|表格)"),
    _rule("zh.named-file", "artifact", r"(?:名为|叫做|叫|命名为|保存为|保存到|写入|写到|输出到|导出到|存为|存到)\s*`?[A-Za-z0-9_./-]+\.[A-Za-z0-9]+"),
    _rule("zh.change-code", "artifact",
          r"(?:修复|修改|修正|改正|更新|重构|重命名|替换|删除|添加|增加|实现|优化|改写|改成|改为|格式化|清理|迁移)"
          r"[^。？！\n]{0,30}(?:文件|代码|函数|类|方法|模块|脚本|bug|Bug|BUG|错误|问题|测试|注释|日志|类型|\.[A-Za-z]{1,5}\b)"),
    # --- source: the deliverable is code, which belongs in a file ------------------------------------
    _rule("en.write-code", "source artifact",
          rf"\b(?:write|create|make(?!\s+sure)|build|implement|code|develop|generate|give me|produce)\b"
          rf"(?!\s+(?:sure|certain))(?:[^.?!\n]|\.(?=\w)){{0,50}}\b{_CODE_NOUN}s?\b(?!\s+(?:starts|runs|works))"),
    _rule("en.source-file-named", "source artifact",
          r"\b(?:write|create|make(?!\s+sure)|generate|build|implement|code|scaffold|develop)\b(?!\s+sure)[^?!\n]{0,80}?"
          r"[A-Za-z0-9_-]\.(?:py|js|ts|sh|go|rs|c|cpp|java|rb|php|pl|lua|swift|kt|cs)\b"),
    _rule("en.write-tests", "source artifact execution tests",
          r"\b(?:write|add|create|implement)\b(?:[^.?!\n]|\.(?=\w)){0,30}\b(?:unit\s+|integration\s+|regression\s+)?tests?\b"
          r"(?!\s+(?:report|results|summary|plan))"),
    _rule("zh.source-file-named", "source artifact",
          r"(?:写|编写|创建|新建|生成|建立|实现|开发|做)[^。？！\n]{0,40}?"
          r"[A-Za-z0-9_-]\.(?:py|js|ts|sh|go|rs|c|cpp|java|rb|php|pl|lua|swift|kt|cs)\b"),
    _rule("zh.write-code", "source artifact", rf"(?:写|编写|创建|实现|开发(?!服务器)|做|生成|给我)[^。？！\n]{{0,12}}(?:一个|一段|个|段)?[^。？！\n]{{0,12}}{_ZH_CODE}"),
    _rule("zh.write-tests", "source artifact execution tests",
          r"(?:写|编写|添加|增加|补充)[^。？！\n]{0,10}(?:单元)?测试(?!报告|结果|总结|一下|下)"),
    # --- fail closed: any verb that acts on the workspace owes a change ---------------------------------
    _rule("en.change-verb", "artifact change",
          r"(?:^|[.!;:,]\s*|\b(?:please|pls|plz|and|then|also|can\s+(?:you|u)|could\s+(?:you|u)|would\s+(?:you|u)|"
          r"go\s+ahead\s+and|pls\s+can\s+u)\s+|(?:^|[.!;:]\s*)(?:in|inside|within|for|on)\s+(?:the\s+)?"
          r"[\w./-]+(?:\s+file)?\s*,?\s+)"
          r"(?:fix|repair|correct|bump|increment|decrement|insert|prepend|append|delete|remove|rename|move|upgrade|"
          r"downgrade|set|replace|update|change|modify|edit|patch|refactor|add|implement|make|translate|convert|"
          r"format|reformat|sort|rewrite|clean|tidy|drop|strip|swap|switch|enable|disable|turn|uncomment|comment\s+out|"
          r"wrap|extract|inline|split|merge|resolve|address|handle|migrate|port|restore|revert|undo|create|write|"
          r"generate|save|put|include|register|apply|pin|unpin|raise|lower|increase|decrease|shorten|lengthen|"
          r"capitali[sz]e|lowercase|uppercase|trim|normali[sz]e|deduplicate|dedupe|get\s+rid\s+of)\b"
          r"(?!\s+sure)(?!\s+certain)"),
    _rule("zh.change-verb", "artifact change",
          r"修|改|删|加上|加到|加进|加入|加一个|加一行|加个|加点|升一下|升级|升到|升至|提升|降到|降至|改至|更新至|调整为|调整成|调高|调低|调大|调小|放到|放进|写进|添加|增加|插入|替换|更新|升级|降级|重命名|移动|实现|写入|创建|新建|生成|调整|去掉|去除|移除|补上|"
          r"补充|换成|设为|设置为|设成|改成|改为|变成|清理|整理|格式化|翻译|转换|恢复|还原|合并|拆分|提取|注释掉|取消注释|记一笔|记上一笔|记上|调到|调成|调为|"
          r"补一笔|补一条|加一条|写一条"),
    # Actions outside the workspace: only a command that really did them can prove them.
    _rule("en.external", "execution action", r"\b(?:deploy|publish|release|upload|push|install|provision|migrate\s+the\s+"
          r"database|send|email|notify)\b"),
    _rule("zh.external", "execution action", r"部署|发布|上线|上传|推送|安装|发送|通知"),
    _rule("en.rename", "rename artifact change", r"\b(?:rename|move|mv)\b"),
    _rule("zh.rename", "rename artifact change", r"重命名|改名|移动到|移到|挪到"),
    _rule("en.tests", "tests",
          r"\btests?\b(?!\s+(?:report|results|summary|plan|it|this|that|them|whether|if|"
          r"the\s+(?:function|script|program|code|app|change|fix|cli|endpoint|feature)s?\b))|\btest\s+suite\b|\bunit\s*tests?\b|\bspecs?\b"
          r"|\bpytest\b|\bunittest\b|\bjest\b|\bvitest\b|\bgo\s+test\b|\bcargo\s+test\b|\bnpm\s+test\b"),
    _rule("zh.tests", "tests", r"测试(?!报告|结果报告|总结|一下|下)|用例|单测"),
    _rule("en.build", "build execution",
          r"\b(?:compiles?|compiling|compilation|builds?\s+(?:cleanly|successfully|without)|does\s+\S+\s+build|"
          r"gcc|g\+\+|clang|make\s+(?:it\s+)?build)\b"),
    _rule("zh.build", "build execution", r"编译|构建|编得过|编不过|能编|编一下"),
    _rule("en.lint", "lint execution", r"\b(?:lint|linter|linting|ruff|flake8|pylint|eslint|mypy|type[- ]?check)\b"),
    _rule("zh.lint", "lint execution", r"代码检查|静态检查|类型检查|lint"),
    _rule("en.delete", "deletion artifact",
          r"\b(?:delete|remove|rm|erase|get\s+rid\s+of|drop)\b(?:[^.?!\n]|\.(?=\w)){0,40}(?:[A-Za-z0-9_-]\.[A-Za-z0-9]{1,8}\b|"
          r"\bfiles?\b|\bdirector(?:y|ies)\b|\bfolders?\b)"),
    _rule("zh.delete", "deletion artifact", r"(?:删掉|删除|删了|移除|去掉|清除)[^。？！\n]{0,20}(?:\.[A-Za-z0-9]{1,8}\b|文件|目录)"
      r"|(?:把|将)[^。？！，,\n]{0,30}?(?:\.[A-Za-z0-9]{1,8}\b|文件|目录)\s*(?:给|都|也)?(?:删掉|删除|删了|移除|去掉|清除)"),
    _rule("en.commit", "commit git", r"\bcommit\b|\bgit\s+commit\b"),
    _rule("zh.commit", "commit git", r"提交(?!报告)"),
    # --- execution: something must run and exit 0 -----------------------------------------------------
    _rule("en.run", "execution", r"\b(?:run|re-?run|execute|launch|invoke)\b(?!\s*\()(?!-)"),
    _rule("en.test-verb", "execution",
          r"\btest\s+(?:it|this|that|them|the\s+\w+|your|my|whether|if)\b|\btests?\s+(?:pass|passes|passing|fail|fails|failing|green)\b"
          r"|\b(?:failing|broken|red)\s+tests?\b|\btest\s+suite\b"),
    _rule("en.test-runner", "execution", r"\b(?:pytest|unittest|jest|vitest|mocha|tox|nox|ctest|cargo\s+(?:test|run|build)|"
          r"go\s+(?:test|run|build)|npm\s+(?:test|run)|yarn\s+test|make\s+test|mvn|gradle)\b"),
    _rule("en.make-sure-it-works", "execution",
          r"\b(?:make\s+sure|ensure|verify|confirm|check)\b(?:[^.?!\n]|\.(?=\w)){0,60}?\b(?:works?|passes|pass|runs?|compiles?|builds?|starts?|"
          r"launch(?:es)?|boots?|still\s+\w+)\b"),
    _rule("en.build-compile", "execution", r"\b(?:compile|build)\s+(?:it|the\s+project|the\s+code|and\s+run)\b"),
    _rule("zh.run", "execution", r"运行|执行|跑一下|跑一遍|跑通|跑测试|跑起来|编译|启动"),
    _rule("zh.test", "execution", r"测试一下|测一下|进行测试|(?:测试|用例)(?:通过|失败|是否通过)|确保[^。？！\n]{0,12}(?:能用|可用|正常|通过|运行)|验证一下|验证[^。？！\n]{0,10}(?:是否|能否)"),
    # --- report: a write-up in a separate file, after running the work -------------------------------
    _rule("en.report", "report", r"\b(?:a|an|the|my|markdown|short|brief|final|benchmark|performance|test|comparison|"
          r"detailed|written)\s+(?:\w+\s+)?report\b(?!\s+(?:back|to\s+me|whether|if))|\breport\s+(?:file|document)\b"
          r"|\b(?:write|generate|produce|create|prepare)\s+(?:up\s+)?(?:a\s+)?(?:\w+\s+)?report\b|\bwrite[- ]?up\b"
          r"|\breport\.(?:md|txt|html|rst|json|csv)\b"),
    _rule("zh.report", "report", r"报告|报表|写成文档|总结成文档|整理成文档"),
    # --- comparison / measurement ------------------------------------------------------------------
    _rule("en.compare", "comparison", r"\b(?:compare|comparing|comparison|versus|vs\.?|against\s+each\s+other|"
          r"difference\s+between|which\s+(?:one\s+)?is\s+(?:faster|slower|better|smaller|bigger))\b"),
    _rule("en.measure", "measurement comparison execution",
          r"\b(?:benchmark\w*|perf|performance|profil(?:e|ing)|latency|throughput|timings?|time\s+(?:it|them|how)|"
          r"how\s+(?:fast|long|slow)|faster|slower|speed(?:up)?|ops/s(?:ec)?|memory\s+usage|runtime\s+of)\b"),
    _rule("zh.compare", "comparison", r"比较|对比|相比|区别|差异|哪个更|孰优孰劣"),
    _rule("zh.measure", "measurement comparison execution",
          r"性能|基准|跑分|耗时|速度|延迟|吞吐|更快|更慢|多快|快多少|慢多少|执行时间|运行时间|内存占用"),
    # --- background processes ----------------------------------------------------------------------
    _rule("en.background", "process execution",
          r"\b(?:in\s+the\s+background|background\s+(?:process|job|task|server)|daemon|long[- ]running|"
          r"dev\s+server|start\s+(?:the|a)\s+(?:\w+\s+)?server|keep\s+(?:it\s+)?running|watch\s+mode|tail\s+the\s+logs?)\b"),
    _rule("zh.background", "process execution", r"后台|守护进程|常驻|长时间运行|启动服务|开发服务器|持续运行"),
    # --- git ---------------------------------------------------------------------------------------
    _rule("en.git-change", "git execution", r"\b(?:git\s+(?:commit|push|merge|rebase|tag|stash|cherry-pick|checkout|switch)|"
          r"commit\s+(?:the|my|your|all|these|this|it)\b|make\s+a\s+commit|create\s+a\s+branch|new\s+branch)"),
    _rule("en.git-look", "git", r"\bgit\b|\b(?:uncommitted|unstaged|staged)\b|\bthe\s+diff\b|\bwhat\s+(?:has\s+)?changed\b|"
          r"\bbranch(?:es)?\b|\bcommits?\b|\bblame\b"),
    _rule("zh.git", "git", r"提交|分支|暂存|未提交|改动|变更|差异对比|合并请求"),
    _rule("zh.git-change", "git execution", r"(?:提交|推送|合并)(?:代码|更改|改动|一下|到)|创建分支|新建分支"),
    # --- memory and delegation ---------------------------------------------------------------------
    _rule("en.memory", "memory", r"\b(?:remember|memori[sz]e|recall|forget|keep\s+in\s+mind|note\s+that|"
          r"my\s+preferences?|what\s+do\s+you\s+know\s+about\s+me)\b"),
    _rule("zh.memory", "memory", r"记住|记得|记下|回忆|忘记|忘掉|别忘了|我的偏好|你还记得"),
    _rule("en.delegate", "delegation", r"\b(?:delegate|sub-?agents?|sub\s+agents?|spawn\s+(?:an?\s+)?(?:\w+\s+)?agents?|"
          r"another\s+agent|helper\s+agents?|hand\s+(?:it\s+)?off)\b"),
    _rule("zh.delegate", "delegation", r"委派|委托|子代理|子\s*agent|子智能体|分派|派一个"),
    # --- questions, analysis and greetings ---------------------------------------------------------
    _rule("en.question", "question", r"^\s*(?:what|why|how|where|when|which|who|whose|does|do|is|are|can|could|"
          r"should|would|will|did|has|have)\b|\?\s*$"),
    _rule("zh.question", "question", r"什么|为什么|为何|怎么|怎样|如何|哪个|哪些|哪里|是否|是不是|吗\s*[？?]?\s*$|呢\s*[？?]?\s*$|？"),
    _rule("en.analysis", "analysis", r"\b(?:analy[sz]e|analysis|review|audit|inspect|investigate|explain|describe|"
          r"summari[sz]e|look\s+(?:at|into)|find\s+out|figure\s+out|understand|walk\s+me\s+through|diagnose|"
          r"debug|trace|where\s+is|find\s+(?:the|all|where)|read|list|show|open|view|display|"
          r"tell\s+(?:me\s+)?(?:what|how|which|where|whether|if))\b"),
    _rule("zh.analysis", "analysis", r"分析|审查|审阅|检查|看看|看一下|解释|说明|总结|排查|调查|定位|找出|找到|梳理|理解|"
          r"查看|读取|阅读|列出|显示|打开"),
    # Listing or showing the workspace's own files is about this workspace even without "this"/"the".
    _rule("en.workspace-files", "workspace listing", r"\b(?:list|show|ls|display|count)\s+(?:all\s+|every\s+)?(?:the\s+)?"
          r"(?:files?|folders?|directories|dirs?|contents?|tree)\b"),
    _rule("zh.workspace-files", "workspace listing", r"(?:列出|显示|看看|查看)[^。？！\n]{0,6}(?:文件|目录|文件夹)"),
    _rule("en.workspace", "workspace",
          r"\b(?:this|the|my|our|these|that)\s+(?:\w+\s+)?(?:function|method|class|file|files|code|module|script|"
          r"repo|repository|project|codebase|package|library|tests?|bug|error|exception|stack\s*trace|traceback|"
          r"config|variable|api|endpoint|directory|folder|workspace|program|implementation|crash|logs?|output|"
          r"results|data|dataset|schema|database|migrations?|dependencies|build|pipeline|server|app|application|"
          r"service|docs|readme|architecture|structure|logic|parser|cli|script|changes)\b"
          r"|`[^`]+`|\b[A-Za-z_][A-Za-z0-9_]*\(\)"),
    _rule("zh.workspace", "workspace", r"这个|这段|该|此|项目|仓库|代码库|代码|函数|方法|模块|脚本|目录|文件|报错|异常|变量|接口|配置"),
    # Names of the directories projects keep code in: asking about them is asking about this workspace.
    _rule("workspace-dirs", "workspace", r"(?<![\w.-])(?:src|lib|app|tests?|docs?|scripts?|pkg|cmd|internal|"
          r"config|web|backend|frontend|server|client)(?:/[\w./-]*)?(?![\w.-])"),
    _rule("en.greeting", "greeting",
          r"^\s*(?:hi|hello|hey|hiya|yo|howdy|greetings|good\s+(?:morning|afternoon|evening)|thanks|thank\s+you|thx|"
          r"cheers)(?:\s+(?:there|all|everyone|again|so\s+much|a\s+lot|k1412|bot))?[\s!.,~:)😀-🙏]*$"),
    _rule("zh.greeting", "greeting", r"^\s*(?:你好|您好|嗨|哈喽|哈啰|早上好|下午好|晚上好|早安|谢谢|多谢|感谢)(?:啊|呀|你|您|了)?[\s!！。.,，~😀-🙏]*$"),
    # --- multi-step work ---------------------------------------------------------------------------
    _rule("en.multistep", "multistep", r"\b(?:then|after\s+that|afterwards|step\s+by\s+step|steps|first\b[^.]*\bthen|finally)\b"
          r"|^\s*\d+[.)]\s+\S[^\n]*\n\s*\d+[.)]\s+\S"),
    _rule("zh.multistep", "multistep", r"然后|接着|随后|之后再|最后|首先|步骤|分步|一步一步|第一步"),
)

RULES_BY_NAME: dict[str, Rule] = {rule.name: rule for rule in RULES}


def strip_urls(text: str) -> str:
    """The request without URLs, so ``https://x.org/index.html`` names no workspace file."""
    return _URL.sub(" ", text)


DOTFILE_NAME = re.compile(
    r"(?<![\w./-])((?:[A-Za-z0-9_-]+/)*\.(?:gitignore|gitattributes|gitmodules|env(?:\.\w+)?|editorconfig|npmrc|nvmrc|"
    r"prettierrc|eslintrc|eslintignore|dockerignore|flake8|pylintrc|babelrc|python-version|tool-versions|"
    r"pre-commit-config\.yaml|coveragerc|clang-format|bashrc|zshrc|profile))(?![\w-])")


def extract_targets(request: str) -> tuple[str, ...]:
    """File names the request mentions, in order, without duplicates or ``./`` prefixes."""
    seen: dict[str, None] = {}
    text = strip_urls(request)
    matches = sorted([*FILE_NAME.finditer(text), *DOTFILE_NAME.finditer(text)], key=lambda m: m.start())
    for match in matches:
        name = match.group(1)
        parts = name.split("/")
        if len(parts) > 1 and all(FILE_NAME.fullmatch(p) for p in parts):
            for part in parts:  # "util.h/util.c" names two files, not a path
                seen.setdefault(part, None)
            continue
        while name.startswith("./"):
            name = name[2:]
        if name.lower() in NOT_FILES or not name:
            continue
        seen.setdefault(name, None)
    return tuple(seen)


def match_rules(request: str) -> tuple[Rule, ...]:
    """The rules that fire on ``request`` (URLs removed first), in table order."""
    text = strip_urls(request)
    return tuple(rule for rule in RULES if rule.matches(text))


def extension(path: str) -> str:
    """The lower-case extension of ``path`` without the dot ('' when none)."""
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name.strip(".") else ""


def is_source_path(path: str) -> bool:
    """A file whose extension marks executable source code."""
    return extension(path) in SOURCE_EXTENSIONS


def is_report_path(path: str) -> bool:
    """A file that can hold a report: a document/data extension, or a name that says report/results."""
    name = path.rsplit("/", 1)[-1].lower()
    if extension(path) in REPORT_EXTENSIONS:
        return True
    return not is_source_path(path) and any(hint in name for hint in REPORT_NAME_HINTS)
