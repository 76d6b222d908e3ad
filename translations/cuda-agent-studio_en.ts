<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
<context>
    <name>cas::widgets::KernelView</name>
    <message numerus="yes">
        <source>Then the device search&apos;s %n kernel(s), instrumented, each timed per simulation step over %1 steps of every game (steps that add simulations to the games&apos; current trees).</source>
        <translation>
            <numerusform>Then the device search&apos;s %n kernel, instrumented, timed per simulation step over %1 steps of every game (steps that add simulations to the games&apos; current trees).</numerusform>
            <numerusform>Then the device search&apos;s %n kernels, instrumented, each timed per simulation step over %1 steps of every game (steps that add simulations to the games&apos; current trees).</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>cas::widgets::ProjectPanel</name>
    <message numerus="yes">
        <source>%1 could not be opened: %n error(s), listed in the Log.</source>
        <translation>
            <numerusform>%1 could not be opened: %n error, listed in the Log.</numerusform>
            <numerusform>%1 could not be opened: %n errors, listed in the Log.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>cas::widgets::RunsModel</name>
    <message numerus="yes">
        <source>%n more</source>
        <translation>
            <numerusform>%n more</numerusform>
            <numerusform>%n more</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>cas::widgets::SearchTreePanel</name>
    <message numerus="yes">
        <source>Board position after %n move(s), checkpoint of iteration %1</source>
        <translation>
            <numerusform>Board position after %n move, checkpoint of iteration %1</numerusform>
            <numerusform>Board position after %n moves, checkpoint of iteration %1</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>cas::widgets::SearchTreeView</name>
    <message numerus="yes">
        <source>N = %Ln visit(s)</source>
        <translation>
            <numerusform>N = %Ln visit</numerusform>
            <numerusform>N = %Ln visits</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%1 on the engine thread, of which %2 for %n instrumented search step(s)</source>
        <translation>
            <numerusform>%1 on the engine thread, of which %2 for %n instrumented search step</numerusform>
            <numerusform>%1 on the engine thread, of which %2 for %n instrumented search steps</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>cas::widgets::SmTimeline</name>
    <message numerus="yes">
        <source>SM timeline of one simulation step: %n kernel(s), %1 blocks on %2 SMs over %3 µs</source>
        <translation>
            <numerusform>SM timeline of one simulation step: %n kernel, %1 blocks on %2 SMs over %3 µs</numerusform>
            <numerusform>SM timeline of one simulation step: %n kernels, %1 blocks on %2 SMs over %3 µs</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>cas::widgets::TuningPanel</name>
    <message numerus="yes">
        <source>Values of the run %1. &lt;b&gt;Bold&lt;/b&gt;: differs from project.toml (%n value(s)); select them to Reset them or to Write them to project.toml. The next run starts from project.toml.</source>
        <translation>
            <numerusform>Values of the run %1. &lt;b&gt;Bold&lt;/b&gt;: differs from project.toml (%n value); select it to Reset it or to Write it to project.toml. The next run starts from project.toml.</numerusform>
            <numerusform>Values of the run %1. &lt;b&gt;Bold&lt;/b&gt;: differs from project.toml (%n values); select them to Reset them or to Write them to project.toml. The next run starts from project.toml.</numerusform>
        </translation>
    </message>
</context>
</TS>
