<?xml version='1.0' encoding='utf-8'?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>QObject</name>
    <message>
        <source>iteration</source>
        <translation>迭代</translation>
    </message>
</context>
<context>
    <name>cas::Parameters</name>
    <message>
        <source>Simulations per move in self-play.</source>
        <translation>自对弈中每步的模拟次数。</translation>
    </message>
    <message>
        <source>Exploration constant of the PUCT selection rule.</source>
        <translation>PUCT 选择规则的探索常数。</translation>
    </message>
    <message>
        <source>Concentration of the Dirichlet noise added to root priors.</source>
        <translation>加到根节点先验上的狄利克雷噪声的集中度参数。</translation>
    </message>
    <message>
        <source>Weight of the Dirichlet noise in root priors (0 disables it).</source>
        <translation>根节点先验中狄利克雷噪声的权重（0 表示关闭）。</translation>
    </message>
    <message>
        <source>Leaves selected per game per step, spread by virtual loss.</source>
        <translation>每局每步选出的叶节点数，由虚拟损失分散。</translation>
    </message>
    <message>
        <source>Virtual loss added on a path while its leaf awaits evaluation.</source>
        <translation>叶节点等待评估期间在其路径上施加的虚拟损失。</translation>
    </message>
    <message>
        <source>Move-choice temperature over root visits in the opening (0 picks the most visited).</source>
        <translation>开局阶段按根节点访问次数选步的温度（0 表示选访问最多的）。</translation>
    </message>
    <message>
        <source>Moves per game played with the temperature; later moves pick the most visited.</source>
        <translation>每局中按温度选步的步数；之后的步选访问最多的。</translation>
    </message>
    <message>
        <source>Tree nodes per game; when full, least recently used subtrees are recycled.</source>
        <translation>每局的搜索树节点上限；满时回收最久未使用的子树。</translation>
    </message>
    <message>
        <source>Root action selection: PUCT with Dirichlet noise, or Gumbel sequential halving.</source>
        <translation>根节点动作选择：带狄利克雷噪声的 PUCT，或 Gumbel 逐次减半。</translation>
    </message>
    <message>
        <source>Actions sampled at the root by the Gumbel policy.</source>
        <translation>Gumbel 策略在根节点采样的动作数。</translation>
    </message>
    <message>
        <source>Keep the chosen child's subtree as the next root.</source>
        <translation>将所选子节点的子树保留为下一步的根。</translation>
    </message>
    <message>
        <source>Self-play games played side by side, evaluated in one batch.</source>
        <translation>并行进行、一次批量评估的自对弈局数。</translation>
    </message>
    <message>
        <source>Finished self-play games between training phases.</source>
        <translation>两次训练阶段之间完成的自对弈局数。</translation>
    </message>
    <message>
        <source>Samples per training step.</source>
        <translation>每个训练步的样本数。</translation>
    </message>
    <message>
        <source>Training steps per iteration.</source>
        <translation>每次迭代的训练步数。</translation>
    </message>
    <message>
        <source>Optimizer.</source>
        <translation>优化器。</translation>
    </message>
    <message>
        <source>Optimizer step size.</source>
        <translation>优化器步长（学习率）。</translation>
    </message>
    <message>
        <source>Momentum of the SGD optimizer.</source>
        <translation>SGD 优化器的动量。</translation>
    </message>
    <message>
        <source>L2 penalty on the weights in the loss.</source>
        <translation>损失中对权重的 L2 惩罚。</translation>
    </message>
    <message>
        <source>Global-norm gradient clipping threshold (0 disables clipping).</source>
        <translation>全局范数梯度裁剪阈值（0 表示不裁剪）。</translation>
    </message>
    <message>
        <source>Positions kept in the replay buffer.</source>
        <translation>回放缓冲区中保留的局面数。</translation>
    </message>
    <message>
        <source>Iterations between evaluations against the baselines.</source>
        <translation>两次基线评估之间的迭代数。</translation>
    </message>
    <message>
        <source>Games per baseline at each evaluation.</source>
        <translation>每次评估中对每个基线的对局数。</translation>
    </message>
    <message>
        <source>Iterations between checkpoints.</source>
        <translation>两次检查点之间的迭代数。</translation>
    </message>
    <message>
        <source>Backend: auto uses CUDA when it is available, else the CPU.</source>
        <translation>后端：auto 在 CUDA 可用时使用 CUDA，否则使用 CPU。</translation>
    </message>
    <message>
        <source>CPU worker threads (0 uses every core).</source>
        <translation>CPU 工作线程数（0 表示使用全部核心）。</translation>
    </message>
    <message>
        <source>Seed of every random choice in the run.</source>
        <translation>本次运行中所有随机选择的种子。</translation>
    </message>
    <message>
        <source>CUDA threads per block (0 asks the occupancy calculator).</source>
        <translation>每个 CUDA 线程块的线程数（0 表示由占用率计算器决定）。</translation>
    </message>
</context>
<context>
    <name>cas::widgets::LogPanel</name>
    <message>
        <source>info</source>
        <translation>信息</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
</context>
<context>
    <name>cas::widgets::MainWindow</name>
    <message>
        <source>CUDA-Agent Studio</source>
        <translation>CUDA-Agent 工作室</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Open Project...</source>
        <translation>打开项目(&amp;O)...</translation>
    </message>
    <message>
        <source>&amp;Recent Projects</source>
        <translation>最近的项目(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About CUDA-Agent Studio</source>
        <translation>关于 CUDA-Agent 工作室(&amp;A)</translation>
    </message>
    <message>
        <source>Project</source>
        <translation>项目</translation>
    </message>
    <message>
        <source>Tuning</source>
        <translation>调参</translation>
    </message>
    <message>
        <source>Policy editor</source>
        <translation>策略编辑器</translation>
    </message>
    <message>
        <source>Search tree</source>
        <translation>搜索树</translation>
    </message>
    <message>
        <source>Metrics</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>Kernels</source>
        <translation>内核</translation>
    </message>
    <message>
        <source>Log</source>
        <translation>日志</translation>
    </message>
    <message>
        <source>No backend: %1</source>
        <translation>没有可用后端：%1</translation>
    </message>
    <message>
        <source>CPU backend (CUDA unavailable: %1)</source>
        <translation>CPU 后端（CUDA 不可用：%1）</translation>
    </message>
    <message>
        <source>CPU backend</source>
        <translation>CPU 后端</translation>
    </message>
    <message>
        <source>%1 could not be opened; see the Log.</source>
        <translation>无法打开 %1；请查看日志。</translation>
    </message>
    <message>
        <source>%1 — CUDA-Agent Studio</source>
        <translation>%1 — CUDA-Agent 工作室</translation>
    </message>
    <message>
        <source>Opened project %1 (%2).</source>
        <translation>已打开项目 %1（%2）。</translation>
    </message>
    <message>
        <source>Open Project</source>
        <translation>打开项目</translation>
    </message>
    <message>
        <source>About CUDA-Agent Studio</source>
        <translation>关于 CUDA-Agent 工作室</translation>
    </message>
    <message>
        <source>&lt;b&gt;CUDA-Agent Studio %1&lt;/b&gt;&lt;p&gt;Design, train, search-debug and export reinforcement-learning policies on NVIDIA GPUs, with a CPU reference backend.&lt;/p&gt;&lt;p&gt;Backend: %2&lt;/p&gt;</source>
        <translation>&lt;b&gt;CUDA-Agent 工作室 %1&lt;/b&gt;&lt;p&gt;在 NVIDIA GPU 上设计、训练、调试搜索并导出强化学习策略，并提供 CPU 参考后端。&lt;/p&gt;&lt;p&gt;后端：%2&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Per-kernel time and occupancy will appear here for runs on the CUDA backend; kernel metrics are not available yet.</source>
        <translation>在 CUDA 后端上运行时，每个内核的耗时与占用率将显示在这里；内核指标尚未提供。</translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation>运行(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Train</source>
        <translation>训练(&amp;T)</translation>
    </message>
    <message>
        <source>Ctrl+T</source>
        <translation>Ctrl+T</translation>
    </message>
    <message>
        <source>&amp;Pause</source>
        <translation>暂停(&amp;P)</translation>
    </message>
    <message>
        <source>Ctrl+P</source>
        <translation>Ctrl+P</translation>
    </message>
    <message>
        <source>&amp;Stop</source>
        <translation>停止(&amp;S)</translation>
    </message>
    <message>
        <source>Ctrl+.</source>
        <translation>Ctrl+.</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Values from project.toml. During a run, double-click a live parameter's value to change it; it applies at the next iteration. The others apply when a run starts.</source>
        <translation>取值来自 project.toml。运行期间双击可实时生效参数的值即可修改，新值在下一次迭代生效；其他参数在运行开始时生效。</translation>
    </message>
    <message>
        <source>Changes in this run:</source>
        <translation>本次运行中的修改：</translation>
    </message>
    <message>
        <source>The live search tree of a self-play game will appear here; the tree view is not available yet.</source>
        <translation>自对弈棋局的实时搜索树将显示在这里；搜索树视图尚未提供。</translation>
    </message>
    <message>
        <source>Training started; the run folder is %1.</source>
        <translation>训练已开始；运行文件夹为 %1。</translation>
    </message>
    <message>
        <source>Iteration %1: %2 games, loss %3, %4 simulations/s</source>
        <translation>第 %1 次迭代：%2 局，损失 %3，每秒 %4 次模拟</translation>
    </message>
    <message>
        <source>Iteration %1 against %2: %3 wins, %4 draws, %5 losses.</source>
        <translation>第 %1 次迭代对阵 %2：%3 胜，%4 平，%5 负。</translation>
    </message>
    <message>
        <source>%1 = %2 (was %3), applied at iteration %4</source>
        <translation>%1 = %2（原为 %3），自第 %4 次迭代生效</translation>
    </message>
    <message>
        <source>The run stopped: %1</source>
        <translation>运行已停止：%1</translation>
    </message>
    <message>
        <source>The run stopped on an error; see the Log.</source>
        <translation>运行因错误而停止；请查看日志。</translation>
    </message>
    <message>
        <source>Training stopped; the run is checkpointed in %1.</source>
        <translation>训练已停止；检查点保存在 %1。</translation>
    </message>
    <message>
        <source>&amp;Resume</source>
        <translation>继续(&amp;R)</translation>
    </message>
    <message>
        <source>Training resumed.</source>
        <translation>训练已继续。</translation>
    </message>
    <message>
        <source>Training pauses after the current iteration.</source>
        <translation>训练将在当前迭代结束后暂停。</translation>
    </message>
    <message>
        <source>Training stops after the current iteration.</source>
        <translation>训练将在当前迭代结束后停止。</translation>
    </message>
    <message>
        <source>%1 = %2 requested; it applies at the next iteration.</source>
        <translation>已请求 %1 = %2；将在下一次迭代生效。</translation>
    </message>
    <message>
        <source>Refused: %1</source>
        <translation>已拒绝：%1</translation>
    </message>
</context>
<context>
    <name>cas::widgets::MetricsPanel</name>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Self-play throughput</source>
        <translation>自对弈吞吐量</translation>
    </message>
    <message>
        <source>simulations/s</source>
        <translation>模拟次数/秒</translation>
    </message>
    <message>
        <source>total</source>
        <translation>总计</translation>
    </message>
    <message>
        <source>policy</source>
        <translation>策略</translation>
    </message>
    <message>
        <source>value</source>
        <translation>价值</translation>
    </message>
    <message>
        <source>Press Train to start a run; its curves appear here.</source>
        <translation>按“训练”开始运行；曲线将显示在这里。</translation>
    </message>
    <message>
        <source>Iteration %1: %2 games played, %3 positions in the replay buffer; stage times: inference %4 s, search %5 s, data %6 s, training %7 s.</source>
        <translation>第 %1 次迭代：已对弈 %2 局，回放缓冲区中有 %3 个局面；各阶段耗时：推理 %4 秒，搜索 %5 秒，数据 %6 秒，训练 %7 秒。</translation>
    </message>
    <message>
        <source>Score against the baselines (win 1, draw 0.5, loss 0)</source>
        <translation>对基线的得分（胜 1，平 0.5，负 0）</translation>
    </message>
    <message>
        <source>score</source>
        <translation>得分</translation>
    </message>
</context>
<context>
    <name>cas::widgets::ParameterTableModel</name>
    <message>
        <source>live</source>
        <translation>实时生效</translation>
    </message>
    <message>
        <source>on restart</source>
        <translation>重启后生效</translation>
    </message>
    <message>
        <source>Parameter</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>Allowed</source>
        <translation>允许范围</translation>
    </message>
    <message>
        <source>Applies</source>
        <translation>生效时机</translation>
    </message>
</context>
<context>
    <name>cas::widgets::PolicyView</name>
    <message>
        <source>Open a project to see its policy.</source>
        <translation>打开项目以查看其策略。</translation>
    </message>
    <message>
        <source>%1 cannot be read: %2</source>
        <translation>无法读取 %1：%2</translation>
    </message>
    <message>
        <source>%1 — read-only: editing arrives with the PDL editor.</source>
        <translation>%1 — 只读：编辑功能将随 PDL 编辑器提供。</translation>
    </message>
</context>
<context>
    <name>cas::widgets::ProjectPanel</name>
    <message>
        <source>No project is open. Use File &gt; Open Project.</source>
        <translation>尚未打开项目。请使用“文件 &gt; 打开项目”。</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;Environment: %2 (%3 actions)&lt;br&gt;Algorithm: %4</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;环境：%2（%3 个动作）&lt;br&gt;算法：%4</translation>
    </message>
    <message numerus="yes">
        <source>%1 could not be opened: %n error(s), listed in the Log.</source>
        <translation>
            <numerusform>无法打开 %1：%n 个错误，详见日志。</numerusform></translation>
    </message>
</context>
<context>
    <name>cas::widgets::RunController</name>
    <message>
        <source>No run is active.</source>
        <translation>没有正在进行的运行。</translation>
    </message>
</context>
</TS>