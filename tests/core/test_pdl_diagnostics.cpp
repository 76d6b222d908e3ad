// PDL diagnostics: each malformed program gets its exact first error ("line:col message"), several
// independent errors are reported in one pass, notes point at the related place, the limits stop
// hostile programs quickly, and the seed's own example compiles (and is refused as an AlphaZero
// policy with a clear message).
#include <QElapsedTimer>
#include <QTest>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/exec/backend.hpp"
#include "core/exec/initialise.hpp"
#include "core/pdl/compiler.hpp"
#include "support/source_dir.hpp"

using cas::pdl::CompileOptions;
using cas::pdl::CompileResult;

namespace {

const std::string kPolicy = "def policy(obs):\n";

// "2,3,3" -> {2, 3, 3}
std::vector<std::int64_t> shapeOf(const QString& text) {
  std::vector<std::int64_t> shape;
  for (const QString& d : text.split(',', Qt::SkipEmptyParts)) shape.push_back(d.toLongLong());
  return shape;
}

CompileResult compileWith(const std::string& source, const QString& obs = "2,3,3", std::int64_t actions = 9, const QString& algorithm = {}) {
  CompileOptions o;
  o.observationShape = shapeOf(obs);
  o.actionCount = actions;
  o.algorithm = algorithm.toStdString();
  return cas::pdl::compile(source, o);
}

std::string at(const cas::Diagnostic& d) {
  return std::to_string(d.location.line) + ":" + std::to_string(d.location.column) + " " + d.message;
}

// Every error, one "line:col message" a line.
QString errors(const CompileResult& r) {
  QStringList out;
  for (const cas::Diagnostic& d : r.diagnostics.items())
    if (d.severity == cas::Severity::Error) out << QString::fromStdString(at(d));
  return out.join('\n');
}

QString firstErrorOf(const CompileResult& r) {
  for (const cas::Diagnostic& d : r.diagnostics.items())
    if (d.severity == cas::Severity::Error) return QString::fromStdString(at(d));
  return {};
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A recursion 63 calls deep whose return nests 30 calls: within each limit but the one on nesting
// across inlined calls (which bounds the C++ stack).
std::string deepRecursion() {
  std::string inner = "f(x, n - 1)";
  for (int i = 0; i < 30; ++i) inner = "relu(" + inner + ")";
  return kPolicy + "    return f(obs, 63)\n\ndef f(x, n):\n    if n > 0:\n        return " + inner + "\n    return x\n";
}

}  // namespace

class TestPdlDiagnostics : public QObject {
  Q_OBJECT

  // One malformed program: its source, the options it is compiled with, and its first error.
  static void row(const char* tag, const std::string& source, const char* expected, const char* obs = "2,3,3",
                  const char* algorithm = "") {
    QTest::newRow(tag) << QByteArray::fromStdString(source) << QString(obs) << QString(algorithm) << QString::fromUtf8(expected);
  }

 private slots:
  void firstError_data() {
    QTest::addColumn<QByteArray>("source");
    QTest::addColumn<QString>("obs");
    QTest::addColumn<QString>("algorithm");
    QTest::addColumn<QString>("expected");
    const std::string& P = kPolicy;

    // --- lexer
    row("tab indentation", "def policy(obs):\n\treturn obs\n", "2:1 tabs are not allowed in indentation; indent with spaces");
    row("bad character", P + "    return obs $ 1\n", "2:16 unexpected character '$'");
    row("non-ASCII outside strings", P + "    return obs \xc3\x97 2\n", "2:16 non-ASCII characters are allowed only in comments and strings");
    row("unclosed string", "@parallel(axis='batch)\n" + P + "    return obs\n", "1:16 this string is not closed before the end of the line");
    row("unclosed bracket", P + "    return dense(obs, units=4\n", "2:17 this bracket is never closed");
    row("unmatched closing bracket", P + "    return obs)\n", "2:15 ')' has no matching opening bracket");
    row("letters after a number", P + "    return obs * 3abc\n", "2:18 '3abc' is not a valid number");
    row("two decimal points", P + "    return obs * 1.2.3\n", "2:18 '1.2.3' is not a valid number");
    row("integer too large", P + "    return obs * 99999999999999999999\n",
        "2:18 the integer 99999999999999999999 is too large (the limit is 9223372036854775807)");
    row("dedent to no block", P + "    x = obs\n  return x\n", "3:3 this line's indentation matches no enclosing block");
    row("unexpected indentation", P + "    x = obs\n        return x\n", "3:9 unexpected indentation");
    row("body not indented", P + "return obs\n", "2:1 expected an indented block for the function 'policy'");
    row("source over 1 MiB", std::string((1 << 20) + 1, '#'), "1:1 the file is larger than 1 MiB; PDL programs are limited to that size");

    row("parameter named twice", "def policy(obs, obs):\n    return obs\n", "1:17 the parameter 'obs' is named twice");
    row("None for a required argument", P + "    return dense(obs, units=None)\n", "2:23 dense() needs a value for 'units', not None");
    row("empty tuple returned", P + "    return ()\n", "1:5 the entry 'policy' must return its outputs, but it returns nothing");

    // --- parser
    row("def without colon", "def policy(obs)\n    return obs\n", "1:16 expected ':' after the function's parameters, got the end of the line");
    row("for without colon", P + "    for i in range(3)\n        x = obs\n    return obs\n",
        "2:22 expected ':' after the loop's range, got the end of the line");
    row("def without parenthesis", "def policy obs:\n    return obs\n", "1:12 expected '(' after the function's name, got 'obs'");
    row("call closed with ]", P + "    return relu(obs]\n", "2:20 expected ')' to close the arguments, got ']'");
    row("body on the def line", "def policy(obs): return obs\n",
        "1:18 expected a new line after ':', got 'return'; the body of the function 'policy' goes on the following lines, indented");
    row("unknown decorator", "@vectorize\n" + P + "    return obs\n", "1:1 unknown decorator '@vectorize'; PDL knows @parallel and @precision");
    row("parallel over another axis", "@parallel(axis='time')\n" + P + "    return obs\n", "1:16 @parallel supports only axis='batch'");
    row("param with a zero size", P + "    return obs + param((3, 0))\n", "2:24 param's shape must be positive integers, got the integer 0");
    row("transpose with too few axes", P + "    return transpose(obs, (1, 0))\n", "2:27 transpose's axes must name each of the tensor's 3 axes once, got 2");
    row("transpose with an axis twice", P + "    return transpose(obs, (0, 0, 1))\n", "2:27 transpose names axis 0 twice");
    row("unknown precision", "@precision('int8')\n" + P + "    return obs\n", "1:12 unknown precision 'int8'; expected 'fp32', 'tf32', 'bf16' or 'fp16'");
    row("decorator without a name", "@3\n" + P + "    return obs\n", "1:2 expected a decorator name after '@', got the number 3");
    row("decorator without def", "@parallel(axis='batch')\nconst x = 1\n", "2:1 expected 'def' after the decorators, got 'const'");
    row("keyword as a variable", P + "    class = 3\n    return obs\n", "2:5 'class' is a keyword and cannot be used as a variable name");
    row("keyword as a parameter", "def policy(obs, if):\n    return obs\n", "1:17 'if' is a keyword and cannot be used as a parameter name");
    row("keyword as a function name", "def lambda(obs):\n    return obs\n", "1:5 'lambda' is a keyword and cannot be used as a function name");
    row("keyword as a constant", "const in = 3\n" + P + "    return obs\n", "1:7 'in' is a keyword and cannot be used as a constant name");
    row("keyword as a value", P + "    return lambda\n", "2:12 expected an expression, got the keyword 'lambda'");
    row("positional after keyword", P + "    return dense(units=4, obs)\n", "2:27 a positional argument cannot follow keyword arguments");
    row("keyword given twice", P + "    return dense(obs, units=4, units=5)\n", "2:32 the keyword argument 'units' is given twice");
    row("chained comparison", P + "    if 1 < 2 < 3:\n        pass\n    return obs\n", "2:14 comparisons cannot be chained; combine them with 'and'");
    row("while loop", P + "    while True:\n        pass\n    return obs\n",
        "2:5 PDL has no 'while' loops; use 'for i in range(N)', which is unrolled at compile time");
    row("def inside def", P + "    def inner(x):\n        return x\n    return obs\n",
        "2:5 functions must be defined at the top level, not inside another function");
    row("power operator", P + "    return obs ** 2\n", "2:16 PDL has no '**' operator; multiply, or use exp and log");
    row("augmented assignment", P + "    x = obs\n    x += 1\n    return x\n", "3:7 PDL has no '+=' operator; write 'x = x + ...'");
    row("floor division", P + "    return obs * (7 // 2)\n", "2:21 PDL has no '//' operator; use '/', which does not round");
    row("parameter default", P + "    return f(obs)\ndef f(x=1):\n    return x\n", "3:8 parameters cannot have default values in PDL");
    row("statement at the top level", "x = 3\n" + P + "    return obs\n", "1:1 expected 'def' or 'const' at the top level, got 'x'");
    row("elif without if", P + "    elif 1:\n        pass\n    return obs\n", "2:5 'elif' without a matching 'if'");
    row("assignment to an attribute", P + "    obs.x = 3\n    return obs\n", "2:5 only plain names can be assigned to");

    // --- names, calls and arguments
    row("undefined name", P + "    return dense(obz, units=4)\n", "2:18 name 'obz' is not defined; did you mean 'obs'?");
    row("undefined local", P + "    h = relu(obs)\n    return dense(hh, units=4)\n", "3:18 name 'hh' is not defined; did you mean 'h'?");
    row("unknown cuda built-in", P + "    return cuda.conv3d(obs, filters=8)\n", "2:12 cuda.conv3d is not a built-in; did you mean 'conv2d'?");
    row("unknown function", P + "    return relux(obs)\n", "2:12 no function or built-in named 'relux'; did you mean 'relu'?");
    row("string for an integer", P + "    return conv2d(obs, filters='many')\n",
        "2:24 conv2d's filters must be an integer in [1, 1048576], got the string 'many'");
    row("integer out of range", P + "    return conv2d(obs, filters=0)\n", "2:24 conv2d's filters must be an integer in [1, 1048576], got the integer 0");
    row("unknown keyword", P + "    return dense(obs, unit=4)\n", "2:23 dense() has no argument named 'unit'; did you mean 'units'?");
    row("unknown padding", P + "    return conv2d(obs, filters=8, padding='full')\n",
        "2:35 conv2d's padding must be 'same' or 'valid', got the string 'full'");
    row("dropout rate out of range", P + "    return dropout(obs, rate=1.5)\n", "2:25 dropout's rate must be a number in [0, 1), got the number 1.5");
    row("integer for a flag", P + "    return dense(obs, units=4, bias=1)\n", "2:32 dense's bias must be True or False, got the integer 1");
    row("too many arguments", P + "    return relu(obs, obs)\n", "2:22 relu() takes at most 1 argument, got 2");
    row("missing required argument", P + "    return dense(obs)\n", "2:12 dense() is missing the argument 'units'");
    row("unknown keyword of a function", P + "    return f(obs, y=1)\n\ndef f(x):\n    return x\n",
        "2:19 f() has no parameter named 'y'; did you mean 'x'?");
    row("too many arguments to a function", P + "    return f(obs, 1)\n\ndef f(x):\n    return x\n", "2:12 f() takes 1 argument but 2 were given");
    row("function named like a built-in", "def relu(x):\n    return x\n" + P + "    return obs\n",
        "1:5 'relu' is a built-in; choose another name for this function");
    row("function defined twice", P + "    return obs\n" + P + "    return obs\n", "3:5 the function 'policy' is defined twice");
    row("constant named like an environment constant", "const action_dim = 3\n" + P + "    return obs\n",
        "1:7 'action_dim' is set by the environment; choose another name for this constant");
    row("calling a tensor", P + "    return obs(1)\n", "2:12 'obs' is a tensor of shape [2, 3, 3], not a function");
    row("indexing a tensor", P + "    return obs[0]\n", "2:15 tensors cannot be indexed in PDL; use reshape, concat or a dense layer instead");
    row("attribute of a value", P + "    return obs.shape\n", "2:12 PDL values have no attributes; '.' is only used in the cuda. prefix of built-ins");

    // --- shapes
    row("+ of unequal shapes", P + "    a = dense(obs, units=4)\n    b = dense(obs, units=5)\n    return a + b\n",
        "4:14 '+' cannot combine tensors of shapes [4] and [5] (shapes broadcast when trailing dimensions are equal or 1)");
    row("concat of unequal shapes", P + "    a = conv2d(obs, filters=8)\n    b = conv2d(obs, filters=4, stride=2)\n    return concat(a, b)\n",
        "4:22 concat along axis 0 needs equal shapes on the other axes, got [8, 3, 3] and [4, 2, 2]");
    row("concat of unequal ranks", P + "    a = dense(obs, units=4)\n    return concat(a, obs)\n",
        "3:22 concat needs tensors with the same number of axes, got [4] and [2, 3, 3]");
    row("concat axis out of range", P + "    a = dense(obs, units=4)\n    return concat(a, a, axis=3)\n",
        "3:25 concat's axis 3 is out of range for a tensor with 1 axis (valid: -1 to 0)");
    row("matmul inner dimensions", P + "    a = reshape(dense(obs, units=6), (2, 3))\n    return matmul(a, a)\n",
        "3:12 matmul cannot multiply [2, 3] by [2, 3]: the first has 3 columns but the second has 2 rows");
    row("matmul of vectors", P + "    a = dense(obs, units=6)\n    return matmul(a, a)\n",
        "3:12 matmul expects two matrices (2-D tensors per sample), got shapes [6] and [6]");
    row("conv2d of a vector", P + "    return conv2d(dense(obs, units=4), filters=8)\n",
        "2:19 conv2d expects a [channels, height, width] tensor, got shape [4]");
    row("conv2d kernel larger than the input", P + "    return conv2d(obs, filters=8, kernel=5, padding='valid')\n",
        "2:35 conv2d's 5x5 kernel does not fit the 3x3 input with padding='valid'");
    row("reshape element count", P + "    return reshape(obs, (4, 5))\n", "2:25 cannot reshape a tensor of shape [2, 3, 3] (18 elements) to [4, 5]");
    row("reshape two unknowns", P + "    return reshape(obs, (-1, -1))\n", "2:25 reshape's shape may have only one -1, got [-1, -1]");
    row("reshape zero", P + "    return reshape(obs, (0, 4))\n", "2:25 reshape's shape must be positive integers (one may be -1), got the integer 0");
    row("softmax axis out of range", P + "    return softmax(obs, axis=5)\n", "2:25 softmax's axis 5 is out of range for a tensor with 3 axes (valid: -3 to 2)");
    row("pool window larger than the input", P + "    return max_pool2d(obs, kernel=4)\n", "2:28 max_pool2d's 4x4 window does not fit the 3x3 input");
    row("attention heads", P + "    q = reshape(obs, (3, 6))\n    return attention(q, q, q, heads=4)\n",
        "3:31 attention's width 6 is not divisible by heads=4");

    // --- compile-time values and control flow
    row("if on a tensor", P + "    if obs:\n        pass\n    return obs\n",
        "2:8 'if' needs a condition known at compile time, not a tensor; use where(mask, a, b) to choose per element");
    row("range of a float", P + "    for i in range(2.5):\n        pass\n    return obs\n", "2:20 range needs integers known at compile time, got the number 2.5");
    row("range outside a for", P + "    r = range(3)\n    return obs\n", "2:9 range(...) can only be used in a for loop");
    row("unpack three into two", P + "    a, b = 1, 2, 3\n    return obs\n", "2:12 cannot unpack a tuple of 3 values into 2 names");
    row("unpack a function's three results into two", P + "    a, b = three(obs)\n    return a\n\ndef three(x):\n    return x, x, x\n",
        "2:12 cannot unpack the tuple returned by three at 2:12 (3 values) into 2 names");
    row("unpack a tensor", P + "    a, b = obs\n    return a\n", "2:12 cannot unpack a tensor of shape [2, 3, 3] into 2 names");
    row("tuple passed to dense", P + "    h = pair(obs)\n    return dense(h, units=4)\n\ndef pair(x):\n    return x, x\n",
        "3:18 dense expects a tensor, got the tuple returned by pair at 2:9");
    row("not of a tensor", P + "    if not obs:\n        pass\n    return obs\n",
        "2:12 'not' works on values known at compile time, not a tensor of shape [2, 3, 3]; combine masks with * (and) or where");
    row("division by zero", P + "    return obs * (1 / 0)\n", "2:21 division by zero in a constant expression");

    // --- the entry point
    row("entry missing", "def polcy(obs):\n    return obs\n", "1:1 no function named 'policy' (the entry point) is defined; did you mean 'polcy'?");
    row("entry with two parameters", "def policy(obs, mask):\n    return obs\n",
        "1:5 the entry 'policy' must take one parameter, the observation; it takes 2");
    row("entry returns nothing", P + "    x = relu(obs)\n", "1:5 the entry 'policy' must return its outputs, but it returns nothing");
    row("entry returns a number", P + "    return 3\n", "2:12 the entry 'policy' must return tensors, but one of its results is the integer 3");
    row("alphazero: one tensor", P + "    return dense(obs, units=9)\n",
        "2:12 an AlphaZero policy must return (logits, value), but 'policy' returns one tensor of shape [9]", "2,3,3", "alphazero");
    row("alphazero: three tensors", P + "    return obs, obs, obs\n",
        "2:5 an AlphaZero policy must return (logits, value), but 'policy' returns 3 tensors", "2,3,3", "alphazero");
    row("alphazero: logits shape", P + "    h = flatten(obs)\n    return dense(h, units=4), dense(h, units=1)\n",
        "3:12 the logits must have shape [9] (action_dim), got [4]", "2,3,3", "alphazero");
    row("alphazero: value shape", P + "    h = flatten(obs)\n    logits = dense(h, units=9)\n    value = dense(h, units=3)\n    return logits, value\n",
        "4:13 the value must have shape [1], got [3]; end the value head with dense(..., units=1)", "2,3,3", "alphazero");
    row("ppo: one tensor", P + "    return dense(obs, units=9)\n",
        "2:12 a PPO policy must return (logits, value), but 'policy' returns one tensor of shape [9]", "4", "ppo");
    row("ppo: value shape", P + "    return dense(obs, units=9), dense(obs, units=2)\n", "2:33 the value must have shape [1], got [2]; end the value head with dense(..., units=1)", "4", "ppo");
    row("unknown algorithm", P + "    return obs\n", "1:1 unknown algorithm 'dqn'", "2,3,3", "dqn");

    // --- limits
    row("expression nested too deeply", P + "    return " + std::string(150, '(') + "obs" + std::string(150, ')') + "\n",
        "2:111 this is nested too deeply (more than 100 levels of blocks, brackets, calls and operators); split it into smaller statements");
    row(
        "operator chain too long",
        P + "    return obs" +
            [] {
              std::string s;
              for (int i = 0; i < 450; ++i) s += " + obs";
              return s;
            }() +
            "\n",
        "2:2404 this expression is too deep (more than 400 levels of operators and calls, each applied to the result of the one before, "
        "with "
        "the brackets and blocks around them); split it into smaller statements");
    row(
        "operator chain in deep brackets",
        P + "    return " + std::string(90, '(') + "obs" +
            [] {
              std::string s;
              for (int i = 0; i < 350; ++i) s += " + obs";
              return s;
            }() +
            std::string(90, ')') + "\n",
        "2:1954 this expression is too deep (more than 400 levels of operators and calls, each applied to the result of the one before, "
        "with "
        "the brackets and blocks around them); split it into smaller statements");
    row("brackets nested a hundred thousand deep", P + "    return " + std::string(100000, '(') + "obs" + std::string(100000, ')') + "\n",
        "2:111 this is nested too deeply (more than 100 levels of blocks, brackets, calls and operators); split it into smaller "
        "statements");
    row("loop of a million iterations", P + "    for i in range(1000000):\n        pass\n    return obs\n",
        "2:14 this loop runs more than 100000 times; loops are unrolled at compile time and limited to that many iterations");
    row("recursion", P + "    return f(obs)\n\ndef f(x):\n    return f(x)\n", "5:12 calls nest more than 64 deep; is 'f' recursive?");
    row("recursion in a constant", "const c = f(1)\ndef f(n):\n    return f(n)\n" + P + "    return obs\n",
        "3:12 calls nest more than 64 deep; is 'f' recursive?");
    row("nesting across inlined calls", deepRecursion(),
        "6:21 expressions, blocks and inlined calls nest more than 500 levels deep here; make the recursion shallower");
    row("too many statements after unrolling", P + "    for i in range(1000):\n        for j in range(1000):\n            x = obs\n    return obs\n",
        "4:13 the program unrolls to more than 200000 statements; reduce the loop counts or the depth of calls");
    row("too many evaluations after unrolling",
        P + "    for i in range(100000):\n        x = concat(" + [] { std::string s = "obs"; for (int i = 1; i < 100; ++i) s += ", obs"; return s; }() +
            ")\n    return obs\n",
        "3:505 the program evaluates more than 2000000 expressions once loops are unrolled and calls inlined; reduce the loop counts, the number "
        "of arguments or the depth of calls");
    row("long unknown name in a long loop",
        P + "    for i in range(100000):\n        x = " + std::string(400, 'a') + "(obs)\n    return obs\n\ndef " + std::string(400, 'b') +
            "(x):\n    return x\n",
        ("3:13 no function or built-in named '" + std::string(400, 'a') + "'").c_str());
    row("tuple doubling in a loop", P + "    t = obs, obs\n    for i in range(40):\n        t = t, t\n    return obs\n",
        "4:13 this tuple would hold more than 1024 values (nested tuples count with their values); tuples are for a few outputs, shapes or loop items");
    row("tensor too large per sample", P + "    return conv2d(obs, filters=1048576)\n",
        "2:12 a tensor of shape [1048576, 84, 84] would have more than 268435456 elements per sample", "4,84,84");
    row("parameter too large", P + "    return dense(obs, units=20000000)\n",
        "2:23 a parameter of shape [18, 20000000] would have more than 268435456 elements");
    row("too many parameters",
        P + "    h = dense(obs, units=16000)\n" + [] { std::string s; for (int i = 0; i < 10; ++i) s += "    h = dense(h, units=16000)\n"; return s; }() +
            "    return h\n",
        "11:9 the network has more than 2147483648 parameters");
  }

  void firstError() {
    QFETCH(QByteArray, source);
    QFETCH(QString, obs);
    QFETCH(QString, algorithm);
    QFETCH(QString, expected);
    QElapsedTimer timer;
    timer.start();
    const CompileResult r = compileWith(source.toStdString(), obs, 9, algorithm);
    QVERIFY2(timer.elapsed() < 30000, "compiling a malformed program must stay quick");
    QVERIFY(!r.policy);
    QCOMPARE(firstErrorOf(r), expected);
  }

  // Independent mistakes are all reported in one pass; a value that is already wrong reports no
  // more errors where it is used; a mistake in an inlined function is reported once, not per call.
  void severalErrors_data() {
    QTest::addColumn<QByteArray>("source");
    QTest::addColumn<QString>("expected");
    const std::string& P = kPolicy;
    auto add = [](const char* tag, const std::string& source, const char* expected) {
      QTest::newRow(tag) << QByteArray::fromStdString(source) << QString(expected);
    };
    add("two bad calls", P + "    x = dense(obs)\n    y = relux(obs)\n    return x\n",
        "2:9 dense() is missing the argument 'units'\n3:9 no function or built-in named 'relux'; did you mean 'relu'?");
    add("bad keyword and bad shapes", P + "    x = dense(obs, unit=4)\n    y = dense(obs, units=3) + dense(obs, units=2)\n    return y\n",
        "2:20 dense() has no argument named 'unit'; did you mean 'units'?\n"
        "3:29 '+' cannot combine tensors of shapes [3] and [2] (shapes broadcast when trailing dimensions are equal or 1)");
    add("two bad characters", P + "    x = obs$\n    return x?\n", "2:12 unexpected character '$'\n3:13 unexpected character '?'");
    add("syntax errors before and after a broken block", P + "    for i in range(3)\n        x = obs\n    y = 1 +\n    return obs\n",
        "2:22 expected ':' after the loop's range, got the end of the line\n4:12 expected an expression, got the end of the line");
    add("syntax error after an unexpected indentation", P + "    x = obs\n        y = obs\n    while x:\n        pass\n    return x\n",
        "3:9 unexpected indentation\n4:5 PDL has no 'while' loops; use 'for i in range(N)', which is unrolled at compile time");
    add("syntax errors in two functions", P + "    return obs +\n\ndef g(x)\n    return x\n",
        "2:17 expected an expression, got the end of the line\n4:9 expected ':' after the function's parameters, got the end of the line");
    add("decorator and body", "@vectorize\n" + P + "    return relux(obs)\n",
        "1:1 unknown decorator '@vectorize'; PDL knows @parallel and @precision\n3:12 no function or built-in named 'relux'; did you mean 'relu'?");
    add("an undefined name is reported once", P + "    y = relu(obz)\n    z = dense(y, units=4)\n    return z + y\n",
        "2:14 name 'obz' is not defined; did you mean 'obs'?");
    add("a mistake in a function called three times", P + "    a = block(obs)\n    b = block(a)\n    return block(b)\n\ndef block(x):\n    return relux(x)\n",
        "7:12 no function or built-in named 'relux'; did you mean 'relu'?");
    add("a mistake in a loop body", P + "    for i in range(5):\n        x = dense(obs, units=i - 2)\n    return obs\n",
        "3:24 dense's units must be an integer in [1, 268435456], got the integer -2");
    add("semantic errors wait for the syntax to be right", P + "    x = relux(obs)\n    return obs +\n",
        "3:17 expected an expression, got the end of the line");
  }

  void severalErrors() {
    QFETCH(QByteArray, source);
    QFETCH(QString, expected);
    const CompileResult r = compileWith(source.toStdString());
    QVERIFY(!r.policy);
    QCOMPARE(errors(r), expected);
  }

  void tooManySyntaxErrors() {
    std::string source = kPolicy;
    for (int i = 0; i < 30; ++i) source += "    x = 1 +\n";
    const CompileResult r = compileWith(source);
    const QStringList lines = errors(r).split('\n');
    QCOMPARE(lines.size(), 21);
    QCOMPARE(lines[19], QString("21:12 expected an expression, got the end of the line"));
    QCOMPARE(lines[20], QString("22:5 too many errors; stopping here"));
  }

  void tooManySemanticErrors() {
    std::string source = kPolicy;
    for (int i = 0; i < 40; ++i) source += "    x" + std::to_string(i) + " = undefined_" + std::to_string(i) + "(obs)\n";
    source += "    return obs\n";
    const QStringList lines = errors(compileWith(source)).split('\n');
    QCOMPARE(lines.size(), 21);
    QCOMPARE(lines[19], QString("21:11 no function or built-in named 'undefined_19'"));
    QCOMPARE(lines[20], QString("22:11 too many errors; stopping here"));
  }

  // Notes point at the related place: where a wrong value was made, where a function is defined.
  void notes_data() {
    QTest::addColumn<QByteArray>("source");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<QString>("note");
    const std::string& P = kPolicy;
    auto add = [](const char* tag, const std::string& source, const char* expected, const char* note) {
      QTest::newRow(tag) << QByteArray::fromStdString(source) << QString(expected) << QString(note);
    };
    add("tuple returned by a function", P + "    h = pair(obs)\n    return dense(h, units=4)\n\ndef pair(x):\n    return x, x\n",
        "3:18 dense expects a tensor, got the tuple returned by pair at 2:9", "2:9 value defined here");
    add("tuple written in place", P + "    h = (obs, obs)\n    return dense(h, units=4)\n", "3:18 dense expects a tensor, got a tuple of 2 values",
        "2:9 value defined here");
    add("string in arithmetic", P + "    s = 'a'\n    return obs + s\n", "3:16 '+' needs numbers or tensors, got the string 'a'",
        "2:9 value defined here");
    add("missing argument of a function", P + "    return residual(obs)\n\ndef residual(x, width):\n    return x\n",
        "2:12 residual() is missing the argument 'width'", "4:5 residual is defined here");
    add("layer name used twice", P + "    a = dense(obs, units=4, name='head')\n    b = dense(obs, units=4, name='head')\n    return a + b\n",
        "3:9 a parameter named 'policy/head/weight' already exists; give this layer another name=", "2:9 the first one is made here");
  }

  void notes() {
    QFETCH(QByteArray, source);
    QFETCH(QString, expected);
    QFETCH(QString, note);
    const CompileResult r = compileWith(source.toStdString());
    QVERIFY(!r.policy);
    QVERIFY(!r.diagnostics.empty());
    const cas::Diagnostic& d = r.diagnostics.items().front();
    QCOMPARE(QString::fromStdString(at(d)), expected);
    QCOMPARE(d.notes.size(), size_t(1));
    QCOMPARE(d.notes[0].severity, cas::Severity::Note);
    QCOMPARE(QString::fromStdString(at(d.notes[0])), note);
  }

  void unusedValueWarnsOnce() {
    const CompileResult r = compileWith(kPolicy + "    for i in range(3):\n        relu(obs)\n    return obs\n");
    QVERIFY(r.policy);
    QCOMPARE(r.diagnostics.items().size(), size_t(1));
    QCOMPARE(r.diagnostics.items()[0].severity, cas::Severity::Warning);
    QCOMPARE(QString::fromStdString(at(r.diagnostics.items()[0])), QString("3:9 this expression's value is not used"));
  }

  // @precision('bf16') on the entry: the trunk's product runs in bf16, the output layer (and the
  // tanh after it) in fp32, and a warning says so at the output layer.
  void outputLayersStayFp32() {
    const CompileResult r = compileWith("@precision('bf16')\n" + kPolicy + "    h = relu(dense(obs, units=16))\n    return tanh(dense(h, units=2))\n");
    QVERIFY2(r.policy, qPrintable(errors(r)));
    QCOMPARE(r.diagnostics.items().size(), size_t(1));
    QCOMPARE(r.diagnostics.items()[0].severity, cas::Severity::Warning);
    QVERIFY2(QString::fromStdString(at(r.diagnostics.items()[0])).startsWith("4:17 'policy/dense_1' computes an output of the policy and stays fp32"),
             qPrintable(QString::fromStdString(at(r.diagnostics.items()[0]))));
    std::vector<cas::ir::Precision> products;
    for (const cas::ir::Node& n : r.policy->graph.nodes)
      if (n.op == cas::ir::Op::MatMul) products.push_back(n.precision);
    QCOMPARE(products, (std::vector<cas::ir::Precision>{cas::ir::Precision::BF16, cas::ir::Precision::F32}));
  }

  // A flat chain `obs + obs + ...` is one level of nesting, not one per operator: a sum of 100 or
  // 300 terms compiles (one of 100 was refused as nested more than 100 levels deep).
  void aLongFlatSumCompiles() {
    for (int terms : {100, 121, 300}) {
      std::string sum = "obs";
      for (int i = 1; i < terms; ++i) sum += (i % 2 ? " + obs" : " - obs * 1.0");
      const CompileResult r = compileWith(kPolicy + "    x = " + sum + "\n    return dense(tanh(dense(x, units=8)), units=2)\n", "4", 2);
      QVERIFY2(r.policy, qPrintable(QString::number(terms) + ": " + errors(r)));
    }
  }

  // transpose permutes the per-sample axes (reversed by default), on the CPU backend too.
  void transposeMovesTheAxes() {
    const CompileResult r = compileWith(kPolicy + "    return transpose(obs), transpose(obs, (2, 0, 1))\n", "2,3,4");
    QVERIFY2(r.policy, qPrintable(errors(r)));
    QCOMPARE(r.policy->outputShapes, (std::vector<std::vector<std::int64_t>>{{4, 3, 2}, {4, 2, 3}}));
    auto exe = cas::exec::BackendRegistry::instance().find("cpu")->backend->compile(r.policy->graph);
    std::vector<float> obs(24);
    for (size_t i = 0; i < obs.size(); ++i) obs[i] = float(i);  // obs[c][h][w] = 12c + 4h + w
    exe->setInput("obs", obs.data(), obs.size());
    exe->run();
    std::vector<float> reversed(24), rotated(24);
    exe->readOutput("output0", reversed.data(), reversed.size());
    exe->readOutput("output1", rotated.data(), rotated.size());
    QCOMPARE(reversed[size_t(3 * 6 + 2 * 2 + 1)], 12.f * 1 + 4 * 2 + 3);  // [w=3][h=2][c=1]
    QCOMPARE(rotated[size_t(3 * 6 + 1 * 3 + 2)], 12.f * 1 + 4 * 2 + 3);   // [w=3][c=1][h=2]
  }

  // param: a learned tensor, the same for every sample, initialised as asked.
  void paramIsALearnedTensorForEverySample() {
    CompileOptions o;
    o.observationShape = {2, 3};
    o.actionCount = 6;
    o.batch = 2;
    const CompileResult r = cas::pdl::compile(kPolicy + "    return obs * 0 + param((2, 3), init='ones', name='table')\n", o);
    QVERIFY2(r.policy, qPrintable(errors(r)));
    QCOMPARE(r.policy->parameters.size(), size_t(1));
    QCOMPARE(r.policy->parameters[0].name, std::string("policy/table/value"));
    QCOMPARE(r.policy->parameters[0].shape, (std::vector<std::int64_t>{2, 3}));
    auto exe = cas::exec::BackendRegistry::instance().find("cpu")->backend->compile(r.policy->graph);
    const cas::ir::Node& table = r.policy->graph.node(r.policy->graph.findInput("policy/table/value"));
    const std::vector<float> ones = cas::exec::initialValues(table, 1), obs(12, 5.0f);
    QCOMPARE(ones, std::vector<float>(6, 1.0f));
    exe->setInput("policy/table/value", ones.data(), ones.size());
    exe->setInput("obs", obs.data(), obs.size());
    exe->run();
    std::vector<float> out(12);
    exe->readOutput("output0", out.data(), out.size());
    QCOMPARE(out, std::vector<float>(12, 1.0f));
  }

  // The limits leave room for ordinary programs: a recursion 60 calls deep compiles.
  void deepRecursionWithinTheLimitsCompiles() {
    const CompileResult r = compileWith(kPolicy + "    return tanh(tower(obs, 60))\n\ndef tower(x, n):\n    if n == 0:\n        return x\n"
                                                  "    return relu(tower(relu(x + 1), n - 1))\n");
    QVERIFY2(r.policy, qPrintable(errors(r)));
  }

  // The seed's example, as DESIGN.md gives it.
  void seedExampleCompiles() {
    const std::string seed =
        "@parallel(axis='batch')\n"
        "def policy(obs):\n"
        "    conv1 = cuda.conv2d(obs, filters=32)\n"
        "    return dense(conv1, units=action_dim)\n";
    const CompileResult r = compileWith(seed, "4,84,84", 6);
    QVERIFY2(r.policy, qPrintable(errors(r)));
    QVERIFY(r.diagnostics.empty());
    QCOMPARE(r.policy->outputNames, std::vector<std::string>{"output0"});
    QCOMPARE(r.policy->outputShapes, std::vector<std::vector<std::int64_t>>{{6}});
    // conv2d defaults: kernel 3, stride 1, padding 'same' (the 84x84 size is kept); dense flattens.
    std::vector<std::string> names;
    for (const auto& p : r.policy->parameters) names.push_back(p.name);
    QCOMPARE(names, (std::vector<std::string>{"policy/conv2d_0/weight", "policy/conv2d_0/bias", "policy/dense_0/weight", "policy/dense_0/bias"}));
    QCOMPARE(r.policy->parameters[0].shape, (std::vector<std::int64_t>{32, 4, 3, 3}));
    QCOMPARE(r.policy->parameters[2].shape, (std::vector<std::int64_t>{32 * 84 * 84, 6}));
    QCOMPARE(r.policy->layers[0].outputShape, (std::vector<std::int64_t>{32, 84, 84}));

    const CompileResult az = compileWith(seed, "4,84,84", 6, "alphazero");
    QVERIFY(!az.policy);
    QCOMPARE(errors(az), QString("4:12 an AlphaZero policy must return (logits, value), but 'policy' returns one tensor of shape [6]"));
  }

  // Parameter names follow the call path; name= replaces the last part and the layer still counts.
  void parametersAreNamedByCallPath() {
    const CompileResult r = compileWith(kPolicy + "    a = dense(obs, units=4, name='head')\n    b = dense(obs, units=4)\n    return blk(a) + blk(b)\n\n"
                                                  "def blk(x):\n    return dense(x, units=4, bias=False)\n");
    QVERIFY2(r.policy, qPrintable(errors(r)));
    std::vector<std::string> names;
    for (const auto& p : r.policy->parameters) names.push_back(p.name);
    QCOMPARE(names, (std::vector<std::string>{"policy/head/weight", "policy/head/bias", "policy/dense_1/weight", "policy/dense_1/bias",
                                              "policy/blk_0/dense_0/weight", "policy/blk_1/dense_0/weight"}));
  }

  // The example projects' policies are valid AlphaZero policies; layers are named by call path.
  void exampleProjectsCompile() {
    const CompileResult ttt = compileWith(readFile(cas::test::sourceFile("projects/tictactoe-alphazero/policy.pdl")), "2,3,3", 9, "alphazero");
    QVERIFY2(ttt.policy, qPrintable(errors(ttt)));
    const CompileResult c4 = compileWith(readFile(cas::test::sourceFile("projects/connect4-alphazero/policy.pdl")), "2,6,7", 7, "alphazero");
    QVERIFY2(c4.policy, qPrintable(errors(c4)));
    QCOMPARE(c4.policy->outputNames, (std::vector<std::string>{"logits", "value"}));
    bool found = false;
    for (const auto& p : c4.policy->parameters) found |= p.name == "policy/residual_1/conv2d_0/weight";
    QVERIFY(found);
  }
};

QTEST_GUILESS_MAIN(TestPdlDiagnostics)
#include "test_pdl_diagnostics.moc"
