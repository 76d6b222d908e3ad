<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
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
        <source>Keep the chosen child&apos;s subtree as the next root.</source>
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
        <source>Self-play and training side by side: each iteration&apos;s training steps read the positions of earlier iterations while self-play plays the next games, and the new weights reach self-play when the iteration ends. Off: one after the other (lock-step), for debugging.</source>
        <translation>自我对弈与训练并行：每次迭代的训练步读取先前迭代的局面，同时自我对弈进行下一批对局，新权重在迭代结束时交给自我对弈。关闭：二者依次进行（锁步），用于调试。</translation>
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
        <source>PPO: environments stepped side by side, their policy evaluated in one batch.</source>
        <translation>PPO：并行推进的环境数，其策略在一个批次中求值。</translation>
    </message>
    <message>
        <source>PPO: steps of every environment per rollout; a rollout of ppo.envs x ppo.rollout_steps samples feeds each update.</source>
        <translation>PPO：每次采样中每个环境的步数；每次更新使用 ppo.envs x ppo.rollout_steps 个样本。</translation>
    </message>
    <message>
        <source>PPO: minibatches each rollout is shuffled into per epoch; it must divide ppo.envs x ppo.rollout_steps.</source>
        <translation>PPO：每轮将采样数据打乱后分成的小批次数；必须整除 ppo.envs x ppo.rollout_steps。</translation>
    </message>
    <message>
        <source>PPO: passes over each rollout&apos;s samples per update.</source>
        <translation>PPO：每次更新遍历采样数据的轮数。</translation>
    </message>
    <message>
        <source>MuZero: environment copies played side by side, every move of all of them chosen by one batched search over the learned model ([search] sets the search).</source>
        <translation>MuZero：并行运行的环境副本数，所有副本的每一步都由一次基于学习模型的批量搜索选出（搜索由 [search] 设置）。</translation>
    </message>
    <message>
        <source>MuZero: steps of dynamics the training graph unrolls from each sampled position (K).</source>
        <translation>MuZero：训练图从每个采样位置展开的动力学步数（K）。</translation>
    </message>
    <message>
        <source>MuZero: rewards summed before a value target bootstraps from the search&apos;s root value (n).</source>
        <translation>MuZero：价值目标在以搜索的根价值自举之前累加的奖励步数（n）。</translation>
    </message>
    <message>
        <source>MuZero: discount of future rewards, in the search&apos;s backups and in the value targets.</source>
        <translation>MuZero：未来奖励的折扣，用于搜索的回传和价值目标。</translation>
    </message>
    <message>
        <source>MuZero: moves of every copy per iteration, before its training steps.</source>
        <translation>MuZero：每次迭代中每个副本在训练步骤之前走的步数。</translation>
    </message>
    <message>
        <source>MuZero: training steps per iteration, each on train.batch_size positions drawn from the replay.</source>
        <translation>MuZero：每次迭代的训练步数，每步从回放中抽取 train.batch_size 个位置。</translation>
    </message>
    <message>
        <source>MuZero: self-play draws its move with probability proportional to visits^(1/temperature); 0 plays the most visited.</source>
        <translation>MuZero：自我对弈按 访问次数^(1/temperature) 的比例抽取动作；0 选择访问最多的动作。</translation>
    </message>
    <message>
        <source>MuZero: the smallest span of Q values the search&apos;s min-max normalisation divides by (0: the span seen, as MuZero does); above 0, values that differ only by the model&apos;s noise, in a tree whose rewards are all zero, are not stretched to [0, 1].</source>
        <translation>MuZero：搜索的最小-最大归一化所除的 Q 值跨度的下限（0：使用实际跨度，与 MuZero 相同）；大于 0 时，在奖励全为零的树中仅因模型噪声而不同的值不会被拉伸到 [0, 1]。</translation>
    </message>
    <message>
        <source>MuZero: environment steps of the whole run; the run ends there.</source>
        <translation>MuZero：整个运行的环境步数；运行在此结束。</translation>
    </message>
    <message>
        <source>PPO: environment steps of the whole run; the learning rate anneals to zero over them and the run ends there.</source>
        <translation>PPO：整个运行的环境步数；学习率在此期间线性衰减到零，运行在此结束。</translation>
    </message>
    <message>
        <source>PPO: Adam&apos;s step size at the start of the run.</source>
        <translation>PPO：运行开始时 Adam 的步长。</translation>
    </message>
    <message>
        <source>PPO: lower the learning rate linearly to zero over ppo.total_steps.</source>
        <translation>PPO：在 ppo.total_steps 内将学习率线性降到零。</translation>
    </message>
    <message>
        <source>PPO: discount factor of future rewards.</source>
        <translation>PPO：未来奖励的折扣因子。</translation>
    </message>
    <message>
        <source>PPO: lambda of generalised advantage estimation (0: one-step TD, 1: Monte Carlo).</source>
        <translation>PPO：广义优势估计的 lambda（0：单步时序差分，1：蒙特卡洛）。</translation>
    </message>
    <message>
        <source>PPO: the probability ratio is clipped to [1 - clip, 1 + clip], and the value&apos;s change per update to +-clip.</source>
        <translation>PPO：概率比被裁剪到 [1 - clip, 1 + clip]，每次更新中价值的变化被裁剪到 ±clip。</translation>
    </message>
    <message>
        <source>PPO: weight of the value loss in the total loss.</source>
        <translation>PPO：价值损失在总损失中的权重。</translation>
    </message>
    <message>
        <source>PPO: weight of the entropy bonus (subtracted from the loss).</source>
        <translation>PPO：熵奖励的权重（从损失中减去）。</translation>
    </message>
    <message>
        <source>PPO: global-norm gradient clipping threshold (0 disables clipping).</source>
        <translation>PPO：全局范数梯度裁剪阈值（0 表示不裁剪）。</translation>
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
    <message>
        <source>Data-parallel training: gradients are summed across ranks in buckets of about this many KiB, each started as soon as its gradients exist.</source>
        <translation>数据并行训练：各 rank 的梯度按约此大小（KiB）分桶求和，每个桶的梯度一产生就开始求和。</translation>
    </message>
    <message>
        <source>Data-parallel training: optimizer steps between checks that every rank holds the same weights and optimizer state (a difference stops the run).</source>
        <translation>数据并行训练：每隔多少个优化器步骤检查一次所有 rank 的权重和优化器状态是否相同（不同则停止运行）。</translation>
    </message>
    <message>
        <source>Data-parallel training: how long a rank waits for the others in a collective before it stops the run with an error naming the rank that did not answer.</source>
        <translation>数据并行训练：一个 rank 在集合通信中等待其他 rank 的最长时间，超时后以指明未响应 rank 的错误停止运行。</translation>
    </message>
    <message>
        <source>Where the search runs: auto keeps the trees on the GPU when the CUDA backend runs the network, cpu keeps them on the CPU (for comparison).</source>
        <translation>搜索在哪里运行：auto 在 CUDA 后端运行网络时把搜索树放在 GPU 上，cpu 把搜索树留在 CPU 上（用于对比）。</translation>
    </message>
    <message>
        <source>GPU selection kernel: masked (predicated, lanes stay together) or branchy (loops and branches as written).</source>
        <translation>GPU 选择内核：masked（谓词执行，线程束中的线程保持一致）或 branchy（按原样的循环与分支）。</translation>
    </message>
    <message>
        <source>Count SIMT efficiency and record an SM timeline in the GPU search&apos;s kernels (slightly slower).</source>
        <translation>在 GPU 搜索的内核中统计 SIMT 效率并记录 SM 时间线（稍慢）。</translation>
    </message>
    <message>
        <source>PPO on the CUDA backend: step the environments&apos; device twins and keep the rollout and its minibatches on the device (off: the CPU twins step on the host). A backend without device twins, such as the CPU backend, steps the CPU twins either way.</source>
        <translation>CUDA 后端上的 PPO：在设备上运行环境的设备孪生，并把采样轨迹及其小批量留在设备上（关闭：由主机上的 CPU 孪生运行环境）。没有设备孪生的后端（例如 CPU 后端）无论如何都在主机上运行 CPU 孪生。</translation>
    </message>
    <message>
        <source>Trading: the share of the price series, from its start, that training draws its episodes from; eval trades the rest, held out.</source>
        <translation>交易：训练从价格序列开头起抽取回合所用的比例；eval 在其余留出部分上交易。</translation>
    </message>
    <message>
        <source>Trading: what a step rewards: price, gym-anytrading&apos;s price change of each closed long (fees not counted); equity, the change of the equity in percent of the starting money (fees counted).</source>
        <translation>交易：每一步的奖励：price 为 gym-anytrading 的每笔平仓多头的价格变化（不计手续费）；equity 为权益的变化，以初始资金的百分比计（计入手续费）。</translation>
    </message>
</context>
<context>
    <name>cas::RuntimeStats</name>
    <message>
        <source>not captured (%1); steps are launched one by one</source>
        <translation>未捕获（%1）；各步逐一启动</translation>
    </message>
    <message>
        <source>captured: %1 graph nodes, replayed per run</source>
        <translation>已捕获：%1 个图节点，每次运行重放</translation>
    </message>
    <message>
        <source>graph</source>
        <translation>CUDA 图</translation>
    </message>
    <message>
        <source>achieved occupancy</source>
        <translation>实际占用率</translation>
    </message>
    <message>
        <source>measured through CUPTI&apos;s range profiler (%1, kernel replay) for generated kernels</source>
        <translation>对生成的内核通过 CUPTI 范围分析器测得（%1，内核重放）</translation>
    </message>
    <message>
        <source>not measured: %1</source>
        <translation>未测量：%1</translation>
    </message>
    <message>
        <source>hit (loaded from the kernel cache)</source>
        <translation>命中（从内核缓存加载）</translation>
    </message>
    <message>
        <source>rebuilt (the cached entry was corrupt)</source>
        <translation>已重建（缓存条目已损坏）</translation>
    </message>
    <message>
        <source>compiled by NVRTC</source>
        <translation>由 NVRTC 编译</translation>
    </message>
    <message>
        <source>kernels</source>
        <translation>内核</translation>
    </message>
    <message>
        <source>%1 generated, %2 library calls, %3 nodes fused without a buffer</source>
        <translation>生成 %1 个，库调用 %2 次，%3 个节点融合而无需缓冲区</translation>
    </message>
    <message>
        <source>module</source>
        <translation>模块</translation>
    </message>
    <message>
        <source>kernel cache</source>
        <translation>内核缓存</translation>
    </message>
    <message>
        <source>%1 hits, %2 compiled, %3 rebuilt (%4)</source>
        <translation>命中 %1 次，编译 %2 次，重建 %3 次（%4）</translation>
    </message>
    <message>
        <source>compile</source>
        <translation>编译</translation>
    </message>
    <message>
        <source>%1 ms in all, %2 ms for the module</source>
        <translation>共 %1 毫秒，其中模块 %2 毫秒</translation>
    </message>
    <message>
        <source>buffers</source>
        <translation>缓冲区</translation>
    </message>
    <message>
        <source>pool allocations</source>
        <translation>内存池分配次数</translation>
    </message>
    <message>
        <source>pool device allocations</source>
        <translation>内存池设备分配次数</translation>
    </message>
    <message>
        <source>pool</source>
        <translation>内存池</translation>
    </message>
    <message>
        <source>reserved %1 in %2 chunk(s), in use %3, peak %4, fragmentation %5%, %6 allocations, %7 releases</source>
        <translation>已预留 %1（%2 块），使用中 %3，峰值 %4，碎片率 %5%，分配 %6 次，释放 %7 次</translation>
    </message>
    <message>
        <source>search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <source>device trees: %1 games x %2 nodes (%3 with the rerooting copy), up to %4 leaves per game per step</source>
        <translation>设备上的树：%1 局 × %2 个节点（含换根副本共 %3），每局每步最多 %4 个叶节点</translation>
    </message>
    <message>
        <source>search evaluator</source>
        <translation>搜索评估器</translation>
    </message>
    <message>
        <source>search graphs</source>
        <translation>搜索图</translation>
    </message>
    <message>
        <source>%1 captured (a root and a step graph per k, selection kernel and instrumentation)</source>
        <translation>已捕获 %1 个（k、选择内核与插桩的每种组合各一个根图和一个步图）</translation>
    </message>
    <message>
        <source>the compiled network (its input and output buffers are the search&apos;s rows)</source>
        <translation>编译后的网络（其输入和输出缓冲区即搜索的行）</translation>
    </message>
    <message>
        <source>hashed (test evaluator, search_math.hpp)</source>
        <translation>哈希（测试用评估器，search_math.hpp）</translation>
    </message>
    <message>
        <source>uniform priors, value 0 (no network)</source>
        <translation>均匀先验，价值 0（无网络）</translation>
    </message>
</context>
<context>
    <name>cas::env::Environments</name>
    <message>
        <source>no-op</source>
        <translation>不动</translation>
    </message>
    <message>
        <source>left</source>
        <translation>左</translation>
    </message>
    <message>
        <source>right</source>
        <translation>右</translation>
    </message>
    <message>
        <source>up</source>
        <translation>上</translation>
    </message>
    <message>
        <source>down</source>
        <translation>下</translation>
    </message>
    <message>
        <source>fire</source>
        <translation>开火</translation>
    </message>
    <message>
        <source>push left</source>
        <translation>向左推</translation>
    </message>
    <message>
        <source>push right</source>
        <translation>向右推</translation>
    </message>
    <message>
        <source>sell</source>
        <translation>卖出</translation>
    </message>
    <message>
        <source>buy</source>
        <translation>买入</translation>
    </message>
</context>
<context>
    <name>cas::widgets::AgentWorker</name>
    <message>
        <source>No run is loaded.</source>
        <translation>尚未加载运行。</translation>
    </message>
    <message>
        <source>%1; checkpoints passed over: %2</source>
        <translation>%1；已跳过的检查点：%2</translation>
    </message>
</context>
<context>
    <name>cas::widgets::BackendStatus</name>
    <message>
        <source>No backend: %1</source>
        <translation>没有可用后端：%1</translation>
    </message>
    <message>
        <source>CPU backend</source>
        <translation>CPU 后端</translation>
    </message>
    <message>
        <source>CPU backend (CUDA unavailable: %1)</source>
        <translation>CPU 后端（CUDA 不可用：%1）</translation>
    </message>
</context>
<context>
    <name>cas::widgets::BoardView</name>
    <message>
        <source>red</source>
        <translation>红方</translation>
    </message>
    <message>
        <source>yellow</source>
        <translation>黄方</translation>
    </message>
    <message>
        <source>X</source>
        <translation>X</translation>
    </message>
    <message>
        <source>O</source>
        <translation>O</translation>
    </message>
    <message>
        <source>Column</source>
        <translation>列</translation>
    </message>
    <message>
        <source>Cell</source>
        <translation>格</translation>
    </message>
    <message>
        <source>This position cannot be shown: %1</source>
        <translation>无法显示此局面：%1</translation>
    </message>
    <message>
        <source>%1%</source>
        <translation>%1%</translation>
    </message>
    <message>
        <source>Q %1</source>
        <translation>Q %1</translation>
    </message>
    <message>
        <source>Q –</source>
        <translation>Q –</translation>
    </message>
    <message>
        <source>P %1</source>
        <translation>P %1</translation>
    </message>
</context>
<context>
    <name>cas::widgets::EpisodeView</name>
    <message>
        <source>action %1</source>
        <translation>动作 %1</translation>
    </message>
    <message>
        <source>%1 was trained with %2; episodes are recorded from single-agent (PPO) runs.</source>
        <translation>%1 是用 %2 训练的；只能从单智能体（PPO）运行录制回合。</translation>
    </message>
    <message>
        <source>No episode recorded yet: train a single-agent project (PPO), then press Record Episode.</source>
        <translation>尚未录制回合：先训练一个单智能体（PPO）项目，再按“录制回合”。</translation>
    </message>
    <message>
        <source>x %1   velocity %2   angle %3°   angular velocity %4</source>
        <translation>位置 %1   速度 %2   角度 %3°   角速度 %4</translation>
    </message>
    <message>
        <source>The episode&apos;s last observation</source>
        <translation>回合的最后一个观测</translation>
    </message>
    <message>
        <source>Policy</source>
        <translation>策略</translation>
    </message>
    <message>
        <source>value %1</source>
        <translation>价值 %1</translation>
    </message>
    <message>
        <source>action: %1, reward %2</source>
        <translation>动作：%1，奖励 %2</translation>
    </message>
    <message>
        <source>Record Episode</source>
        <translation>录制回合</translation>
    </message>
    <message>
        <source>Play</source>
        <translation>播放</translation>
    </message>
    <message>
        <source>Sampled actions</source>
        <translation>按概率采样动作</translation>
    </message>
    <message>
        <source>Plays one episode of the run&apos;s newest valid checkpoint in a fresh environment, on the CPU backend.</source>
        <translation>在新环境中用该运行最新的有效检查点玩一个回合（CPU 后端）。</translation>
    </message>
    <message>
        <source>Sample each action from the policy&apos;s probabilities instead of taking the most probable one.</source>
        <translation>按策略的概率采样每个动作，而不是取概率最大的动作。</translation>
    </message>
    <message>
        <source>%1 steps, return %2 (%3), from %4.</source>
        <translation>%1 步，回报 %2（%3），来自 %4。</translation>
    </message>
    <message>
        <source>the environment ended it</source>
        <translation>由环境结束</translation>
    </message>
    <message>
        <source>cut at %1 steps</source>
        <translation>在 %1 步处截断</translation>
    </message>
    <message>
        <source>No episode was recorded: %1</source>
        <translation>未录制回合：%1</translation>
    </message>
    <message>
        <source>step %1 of %2, return %3</source>
        <translation>第 %1 / %2 步，回报 %3</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Recording an episode...</source>
        <translation>正在录制回合……</translation>
    </message>
    <message>
        <source>No run yet: train a single-agent project (PPO), or pick its run in the Runs dock.</source>
        <translation>还没有运行：训练一个单智能体（PPO）项目，或在“运行”面板中选择它的运行。</translation>
    </message>
    <message>
        <source>The run is not a single-agent one: the Board and the search tree show a two-player game&apos;s runs.</source>
        <translation>该运行不是单智能体运行：双人游戏的运行请用棋盘和搜索树查看。</translation>
    </message>
    <message>
        <source>Press Record Episode to play one episode of %1.</source>
        <translation>按“录制回合”玩一个 %1 的回合。</translation>
    </message>
</context>
<context>
    <name>cas::widgets::ExportDialog</name>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Export Policy</source>
        <translation>导出策略</translation>
    </message>
    <message>
        <source>Run %1</source>
        <translation>运行 %1</translation>
    </message>
    <message>
        <source>Project %1 (the initial weights its training starts from)</source>
        <translation>项目 %1（训练开始时的初始权重）</translation>
    </message>
    <message>
        <source>ONNX model (.onnx)</source>
        <translation>ONNX 模型（.onnx）</translation>
    </message>
    <message>
        <source>Standalone C99 source (.c and .h)</source>
        <translation>独立的 C99 源代码（.c 和 .h）</translation>
    </message>
    <message>
        <source>The newest valid checkpoint</source>
        <translation>最新的有效检查点</translation>
    </message>
    <message>
        <source>Iteration %1</source>
        <translation>第 %1 次迭代</translation>
    </message>
    <message>
        <source>None: a project&apos;s initial weights</source>
        <translation>无：项目的初始权重</translation>
    </message>
    <message>
        <source>dynamic</source>
        <translation>动态</translation>
    </message>
    <message>
        <source>Source:</source>
        <translation>来源：</translation>
    </message>
    <message>
        <source>Format:</source>
        <translation>格式：</translation>
    </message>
    <message>
        <source>Weights:</source>
        <translation>权重：</translation>
    </message>
    <message>
        <source>Batch size:</source>
        <translation>批大小：</translation>
    </message>
    <message>
        <source>ONNX opset:</source>
        <translation>ONNX 算子集版本：</translation>
    </message>
    <message>
        <source>Output file:</source>
        <translation>输出文件：</translation>
    </message>
    <message>
        <source>Export To</source>
        <translation>导出到</translation>
    </message>
    <message>
        <source>ONNX models (*.onnx)</source>
        <translation>ONNX 模型 (*.onnx)</translation>
    </message>
    <message>
        <source>C source files (*.c)</source>
        <translation>C 源文件 (*.c)</translation>
    </message>
    <message>
        <source>Skipped checkpoint %1</source>
        <translation>已跳过检查点 %1</translation>
    </message>
    <message>
        <source>Written:</source>
        <translation>已写入：</translation>
    </message>
    <message>
        <source>Format: ONNX, opset %1, %2</source>
        <translation>格式：ONNX，算子集版本 %1，%2</translation>
    </message>
    <message>
        <source>batch %1</source>
        <translation>批大小 %1</translation>
    </message>
    <message>
        <source>dynamic batch</source>
        <translation>动态批大小</translation>
    </message>
    <message>
        <source>Format: C99 (libm only); build with cc -std=c99 -O2 -c %1, link with -lm</source>
        <translation>格式：C99（仅依赖 libm）；用 cc -std=c99 -O2 -c %1 编译，链接时加 -lm</translation>
    </message>
    <message>
        <source>Weights: the initial weights of project %1 (iteration 0)</source>
        <translation>权重：项目 %1 的初始权重（第 0 次迭代）</translation>
    </message>
    <message>
        <source>Weights: checkpoint %1 of project %2, iteration %3</source>
        <translation>权重：项目 %2 的检查点 %1，第 %3 次迭代</translation>
    </message>
    <message>
        <source>Nothing was written: %1</source>
        <translation>未写入任何文件：%1</translation>
    </message>
    <message>
        <source>Standalone CUDA source (.cu and .h)</source>
        <translation>独立 CUDA 源代码（.cu 和 .h）</translation>
    </message>
    <message>
        <source>ONNX: a fixed batch size, or dynamic (the batch axis is named &apos;batch&apos;).
CUDA: the most observations per call (the pass is captured at this size).</source>
        <translation>ONNX：固定的批大小，或动态（批轴名为 &apos;batch&apos;）。
CUDA：每次调用最多的观测数（前向计算按此大小捕获）。</translation>
    </message>
    <message>
        <source>CUDA source files (*.cu)</source>
        <translation>CUDA 源文件 (*.cu)</translation>
    </message>
    <message>
        <source>Format: CUDA (the CUDA runtime only), observations per call: at most %1; build with nvcc -arch=sm_90 -O3 -c %2</source>
        <translation>格式：CUDA（仅依赖 CUDA 运行时），每次调用的观测数：最多 %1；构建命令：nvcc -arch=sm_90 -O3 -c %2</translation>
    </message>
</context>
<context>
    <name>cas::widgets::GeneratedCodeView</name>
    <message>
        <source>Nothing compiled yet.</source>
        <translation>尚未编译任何内容。</translation>
    </message>
    <message>
        <source>No kernels generated yet.</source>
        <translation>尚未生成内核。</translation>
    </message>
    <message>
        <source>IR after the passes (CPU backend)</source>
        <translation>经各编译遍处理后的 IR（CPU 后端）</translation>
    </message>
    <message>
        <source>CUDA kernel source</source>
        <translation>CUDA 内核源码</translation>
    </message>
    <message>
        <source>CUDA kernel source is not shown: %1.</source>
        <translation>未显示 CUDA 内核源码：%1。</translation>
    </message>
    <message>
        <source>Generated by the CUDA backend on %1.</source>
        <translation>由 CUDA 后端在 %1 上生成。</translation>
    </message>
    <message>
        <source>Out of date: the program has errors; this is the code of the last version that compiled.</source>
        <translation>已过期：程序有错误；此处为最后一个成功编译版本的代码。</translation>
    </message>
    <message>
        <source>The CPU backend interprets this graph node by node. Passes: %1.</source>
        <translation>CPU 后端逐节点解释执行此计算图。编译遍：%1。</translation>
    </message>
    <message>
        <source>cuBLAS and cuDNN calls are listed without source.</source>
        <translation>cuBLAS 和 cuDNN 调用仅列出，不含源码。</translation>
    </message>
    <message>
        <source>Nothing to show yet: the program has errors.</source>
        <translation>暂无可显示的内容：程序有错误。</translation>
    </message>
    <message>
        <source>The passes failed: %1</source>
        <translation>编译遍执行失败：%1</translation>
    </message>
    <message>
        <source>Batch 1 · %1 nodes · %2 kernel launches · %3 buffers</source>
        <translation>批大小 1 · %1 个节点 · %2 次内核启动 · %3 个缓冲区</translation>
    </message>
    <message>
        <source>Batch 1 · %1 nodes · no schedule: %2</source>
        <translation>批大小 1 · %1 个节点 · 无法调度：%2</translation>
    </message>
    <message>
        <source>Kernel generation failed: %1</source>
        <translation>内核生成失败：%1</translation>
    </message>
    <message>
        <source>Batch 1 · %1 generated kernels · %2 library calls (without source) · %3 ms</source>
        <translation>批大小 1 · %1 个生成的内核 · %2 个库调用（无源码） · %3 ms</translation>
    </message>
</context>
<context>
    <name>cas::widgets::HelpMenu</name>
    <message>
        <source>&amp;PDL Reference</source>
        <translation>PDL 参考(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Keyboard Shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <source>&amp;Documentation Folder</source>
        <translation>文档文件夹(&amp;D)</translation>
    </message>
    <message>
        <source>Documentation Folder</source>
        <translation>文档文件夹</translation>
    </message>
    <message>
        <source>The docs folder was not found next to the studio or in its source tree.</source>
        <translation>在工作室旁边或其源代码树中找不到 docs 文件夹。</translation>
    </message>
    <message>
        <source>No file manager could be started. The documentation is in %1.</source>
        <translation>无法启动文件管理器。文档位于 %1。</translation>
    </message>
</context>
<context>
    <name>cas::widgets::ImGuiOverlay</name>
    <message>
        <source>Dear ImGui&apos;s OpenGL 3 renderer could not start in this context.</source>
        <translation>Dear ImGui 的 OpenGL 3 渲染器无法在此上下文中启动。</translation>
    </message>
    <message>
        <source>Debug overlay (F12)</source>
        <translation>调试浮层（F12）</translation>
    </message>
    <message>
        <source>Frame time, last %1 frames (ms)</source>
        <translation>帧时间，最近 %1 帧（ms）</translation>
    </message>
</context>
<context>
    <name>cas::widgets::KernelTableModel</name>
    <message>
        <source>n/a</source>
        <translation>不适用</translation>
    </message>
    <message>
        <source>Mean time per run, measured with CUDA events while the kernels are launched one by one.</source>
        <translation>逐个启动内核时用 CUDA 事件测得的每次运行平均时间。</translation>
    </message>
    <message>
        <source>Active warps per SM over the maximum, from the occupancy calculator.</source>
        <translation>每个 SM 的活跃 warp 数与最大值之比，由占用率计算器得出。</translation>
    </message>
    <message>
        <source>Measured active warps per SM over the maximum; n/a while the backend does not collect it.</source>
        <translation>实测的每个 SM 活跃 warp 数与最大值之比；后端未采集时显示“不适用”。</translation>
    </message>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>Kernel</source>
        <translation>内核</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Time (µs)</source>
        <translation>时间（µs）</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>占比</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>Registers</source>
        <translation>寄存器</translation>
    </message>
    <message>
        <source>Shared memory (B)</source>
        <translation>共享内存（B）</translation>
    </message>
    <message>
        <source>Theoretical occupancy</source>
        <translation>理论占用率</translation>
    </message>
    <message>
        <source>Achieved occupancy</source>
        <translation>实际占用率</translation>
    </message>
    <message>
        <source>Launch</source>
        <translation>启动配置</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Share of the summed kernel time: of the inference graph&apos;s run, or of the search&apos;s simulation step.</source>
        <translation>占内核总时间的比例：推理图的一次运行，或搜索的一个模拟步。</translation>
    </message>
    <message>
        <source>The share of a warp&apos;s 32 lanes active at each sampled step (100%: no divergence); measured in the device search&apos;s instrumented kernels, n/a for the others.</source>
        <translation>每个采样步中一个 warp 的 32 条通道里处于活动状态的比例（100%：无分歧）；在设备搜索的插桩内核中测得，其他内核为 n/a。</translation>
    </message>
    <message>
        <source>SIMT efficiency</source>
        <translation>SIMT 效率</translation>
    </message>
</context>
<context>
    <name>cas::widgets::KernelView</name>
    <message>
        <source>Profile Again</source>
        <translation>重新分析性能</translation>
    </message>
    <message>
        <source>Select a kernel to see its CUDA source.</source>
        <translation>选择一个内核以查看其 CUDA 源码。</translation>
    </message>
    <message>
        <source>Time every kernel again at the end of the current iteration.</source>
        <translation>在当前迭代结束时重新为每个内核计时。</translation>
    </message>
    <message>
        <source>The kernels of the self-play inference graph are timed at the end of the current iteration.</source>
        <translation>自对弈推理图的内核将在当前迭代结束时计时。</translation>
    </message>
    <message>
        <source>Start a run to time the kernels of its self-play inference graph on the CUDA backend.</source>
        <translation>开始一次运行，即可在 CUDA 后端上为其自对弈推理图的内核计时。</translation>
    </message>
    <message>
        <source>GPU kernel metrics need the CUDA backend. Backend in use: %1. The CPU backend interprets the graph node by node and has no kernels to time; below are the stage times of the latest iterations.</source>
        <translation>GPU 内核指标需要 CUDA 后端。当前使用的后端：%1。CPU 后端逐节点解释执行计算图，没有可计时的内核；下方为最近几次迭代的各阶段耗时。</translation>
    </message>
    <message>
        <source>Self-play inference graph &apos;%1&apos; at batch %2, after iteration %3: %4 kernels, %5 µs per run when launched one by one (mean of %6 runs).</source>
        <translation>自对弈推理图“%1”（批大小 %2，第 %3 次迭代后）：%4 个内核，逐个启动时每次运行 %5 µs（%6 次运行的平均值）。</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>%1 is a %2 call; it has no generated source.</source>
        <translation>%1 是 %2 调用，没有生成的源码。</translation>
    </message>
    <message numerus="yes">
        <source>Then the device search&apos;s %n kernel(s), instrumented, each timed per simulation step over %1 steps of every game (steps that add simulations to the games&apos; current trees).</source>
        <translation>
            <numerusform>随后是设备搜索的 %n 个内核，已插桩，每个按模拟步计时，共对每局游戏运行 %1 步（这些步会为各局当前的搜索树增加模拟次数）。</numerusform>
        </translation>
    </message>
    <message>
        <source>Device search kernels over the iterations profiled</source>
        <translation>各次分析迭代中的设备搜索内核</translation>
    </message>
    <message>
        <source>iteration</source>
        <translation>迭代</translation>
    </message>
    <message>
        <source>% (time-weighted)</source>
        <translation>%（按时间加权）</translation>
    </message>
    <message>
        <source>SIMT efficiency</source>
        <translation>SIMT 效率</translation>
    </message>
    <message>
        <source>occupancy</source>
        <translation>占用率</translation>
    </message>
    <message>
        <source>Profile the kernels again every %1 s while the run trains, at the end of an iteration.</source>
        <translation>训练进行时每 %1 秒在一次迭代结束时重新分析内核。</translation>
    </message>
    <message>
        <source>L&amp;ive</source>
        <translation>实时(&amp;I)</translation>
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
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <translation>%1 小时 %2 分</translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <translation>%1 分 %2 秒</translation>
    </message>
    <message>
        <source>St&amp;ep</source>
        <translation>单步(&amp;E)</translation>
    </message>
    <message>
        <source>Ctrl+J</source>
        <translation>Ctrl+J</translation>
    </message>
    <message>
        <source>While paused: one more simulation in every self-play game</source>
        <translation>暂停时：在每局自对弈中再执行一次模拟</translation>
    </message>
    <message>
        <source>no iteration limit</source>
        <translation>不限迭代次数</translation>
    </message>
    <message>
        <source>stop after </source>
        <translation>迭代 </translation>
    </message>
    <message>
        <source> iterations</source>
        <translation> 次后停止</translation>
    </message>
    <message>
        <source>The next run&apos;s budget; the status bar shows its progress and ETA.</source>
        <translation>下一次运行的迭代预算；状态栏会显示其进度和 ETA。</translation>
    </message>
    <message>
        <source>Board</source>
        <translation>棋盘</translation>
    </message>
    <message>
        <source>Simulations stepped in every self-play game during this run: %1</source>
        <translation>本次运行中在每局自对弈中单步执行的模拟次数：%1</translation>
    </message>
    <message>
        <source>The run ended after %1 iterations in %2.</source>
        <translation>运行在 %1 次迭代后结束，用时 %2。</translation>
    </message>
    <message>
        <source>%1 elapsed, the first iteration is running</source>
        <translation>已用时 %1，正在进行第一次迭代</translation>
    </message>
    <message>
        <source>Iteration %1 of %2, about %3 left (%4 per iteration)</source>
        <translation>第 %1/%2 次迭代，剩余约 %3（每次迭代 %4）</translation>
    </message>
    <message>
        <source>Iteration %1, %2 elapsed, %3 iterations/min</source>
        <translation>第 %1 次迭代，已用时 %2，每分钟 %3 次迭代</translation>
    </message>
    <message>
        <source>%1 (paused)</source>
        <translation>%1（已暂停）</translation>
    </message>
    <message>
        <source>The search runs on the GPU: its trees and games stay in device memory.</source>
        <translation>搜索在 GPU 上运行：搜索树和对局都保留在显存中。</translation>
    </message>
    <message>
        <source>The search runs on the CPU.</source>
        <translation>搜索在 CPU 上运行。</translation>
    </message>
    <message>
        <source>Iteration %1: %2 games, no training step yet (%3 positions, for the next iteration), %4 simulations/s</source>
        <translation>第 %1 次迭代：%2 局，尚未进行训练步（已有 %3 个局面，供下一次迭代使用），每秒 %4 次模拟</translation>
    </message>
    <message>
        <source>Iteration %1: %2 games, no training step yet (%3 of %4 positions), %5 simulations/s</source>
        <translation>第 %1 次迭代：%2 局，尚未进行训练步（%4 个局面中已有 %3 个），每秒 %5 次模拟</translation>
    </message>
    <message>
        <source>%1 does not exist; no project was opened. Open one with File &gt; Open Project.</source>
        <translation>%1 不存在；未打开任何项目。请用“文件 &gt; 打开项目”打开一个项目。</translation>
    </message>
    <message>
        <source>&amp;Export...</source>
        <translation>导出(&amp;E)...</translation>
    </message>
    <message>
        <source>Ctrl+E</source>
        <translation>Ctrl+E</translation>
    </message>
    <message>
        <source>Exports the current run&apos;s policy (or the project&apos;s initial weights) as ONNX or C source</source>
        <translation>将当前运行的策略（或项目的初始权重）导出为 ONNX 或 C 源代码</translation>
    </message>
    <message>
        <source>&amp;New Project...</source>
        <translation>新建项目(&amp;N)...</translation>
    </message>
    <message>
        <source>&amp;Reset Layout</source>
        <translation>重置布局(&amp;R)</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>运行列表</translation>
    </message>
    <message>
        <source>Training the saved %1; the editor&apos;s unsaved changes are not in this run.</source>
        <translation>正在训练已保存的 %1；编辑器中未保存的更改不在此运行中。</translation>
    </message>
    <message>
        <source>Resumed %1 from iteration %2, with the project file and policy it was trained with.</source>
        <translation>已从第 %2 次迭代继续训练 %1，使用训练它时的项目文件和策略。</translation>
    </message>
    <message>
        <source>project.toml has errors (above); the Tuning dock keeps the values last read.</source>
        <translation>project.toml 有错误（见上文）；“调参”面板保留上次读取的值。</translation>
    </message>
    <message>
        <source>Read %1 again; the Tuning dock shows its values.</source>
        <translation>已重新读取 %1；“调参”面板显示其中的值。</translation>
    </message>
    <message>
        <source>The Board is still loading a run or searching; ask again once it is done.</source>
        <translation>“棋盘”仍在加载运行或搜索；请在完成后重试。</translation>
    </message>
    <message>
        <source>The Board could not load %1: %2</source>
        <translation>“棋盘”无法加载 %1：%2</translation>
    </message>
    <message>
        <source>The Metrics dock shows the newest run, %1; the Runs dock lists them all.</source>
        <translation>“指标”面板显示最新的运行 %1；“运行列表”面板列出所有运行。</translation>
    </message>
    <message>
        <source>Iteration %1 of %2, %3 elapsed</source>
        <translation>第 %1/%2 次迭代，已用时 %3</translation>
    </message>
    <message>
        <source>Episode</source>
        <translation>回合</translation>
    </message>
    <message>
        <source>Iteration %1: %2 environment steps, mean return %3, %4 steps/s</source>
        <translation>第 %1 次迭代：%2 个环境步，平均回报 %3，每秒 %4 步</translation>
    </message>
    <message>
        <source>Iteration %1: %2 environment steps, no episode ended, %3 steps/s</source>
        <translation>第 %1 次迭代：%2 个环境步，没有回合结束，每秒 %3 步</translation>
    </message>
    <message>
        <source>&amp;Go To</source>
        <translation>转到(&amp;G)</translation>
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
        <source>score</source>
        <translation>得分</translation>
    </message>
    <message>
        <source>L2</source>
        <translation>L2</translation>
    </message>
    <message>
        <source>games/s</source>
        <translation>对局数/秒</translation>
    </message>
    <message>
        <source>inference incl. copies</source>
        <translation>推理（含数据拷贝）</translation>
    </message>
    <message>
        <source>tree search</source>
        <translation>树搜索</translation>
    </message>
    <message>
        <source>data exchange</source>
        <translation>数据交换</translation>
    </message>
    <message>
        <source>training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>iteration</source>
        <translation>迭代</translation>
    </message>
    <message>
        <source>Overlay Run...</source>
        <translation>叠加运行...</translation>
    </message>
    <message>
        <source>Remove Overlay</source>
        <translation>移除叠加</translation>
    </message>
    <message>
        <source>Score against the baselines</source>
        <translation>对阵基线的得分</translation>
    </message>
    <message>
        <source>Self-play simulations per second</source>
        <translation>自对弈每秒模拟次数</translation>
    </message>
    <message>
        <source>Self-play games per second</source>
        <translation>自对弈每秒对局数</translation>
    </message>
    <message>
        <source>Time per stage in an iteration</source>
        <translation>每次迭代中各阶段的耗时</translation>
    </message>
    <message>
        <source>seconds</source>
        <translation>秒</translation>
    </message>
    <message>
        <source>Press Train to start a run; its curves appear here. Right-click a plot to export it.</source>
        <translation>按“训练”开始一次运行，其曲线将显示在这里。右键单击图表可将其导出。</translation>
    </message>
    <message>
        <source>&amp;Smoothing:</source>
        <translation>平滑(&amp;S)：</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Iteration %1: %2 games played, %3 positions in the replay buffer.</source>
        <translation>第 %1 次迭代：已进行 %2 局，回放缓冲区中有 %3 个局面。</translation>
    </message>
    <message>
        <source>%1 cannot be read (%2); choose a run folder, the one holding config.toml and metrics.jsonl.</source>
        <translation>无法读取 %1（%2）；请选择运行文件夹，即包含 config.toml 和 metrics.jsonl 的文件夹。</translation>
    </message>
    <message>
        <source>%1 holds no metrics yet.</source>
        <translation>%1 中尚无指标。</translation>
    </message>
    <message>
        <source>Overlay Run</source>
        <translation>叠加运行</translation>
    </message>
    <message>
        <source>%1 could not be written: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <source>%1 could not be written.</source>
        <translation>无法写入 %1。</translation>
    </message>
    <message>
        <source>Save Plot as PNG...</source>
        <translation>将图表保存为 PNG...</translation>
    </message>
    <message>
        <source>Save Plot as PNG</source>
        <translation>将图表保存为 PNG</translation>
    </message>
    <message>
        <source>PNG images (*.png)</source>
        <translation>PNG 图像 (*.png)</translation>
    </message>
    <message>
        <source>Export Data as CSV...</source>
        <translation>将数据导出为 CSV...</translation>
    </message>
    <message>
        <source>Export Data as CSV</source>
        <translation>将数据导出为 CSV</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <source>Wheel: scroll. Ctrl+wheel: zoom. Drag: pan. Double-click: follow the data again. Right-click to save the plot as PNG or its data as CSV.</source>
        <translation>滚轮：滚动。Ctrl+滚轮：缩放。拖动：平移。双击：重新跟随数据。右键可将图表保存为 PNG 或将数据导出为 CSV。</translation>
    </message>
    <message>
        <source>&amp;Log scale</source>
        <translation>对数刻度(&amp;L)</translation>
    </message>
    <message>
        <source>A win scores 1, a draw 0.5, a loss 0. </source>
        <translation>胜计 1 分，和计 0.5 分，负计 0 分。</translation>
    </message>
    <message>
        <source>Self-play inference (copies of the network&apos;s inputs and outputs included), tree search, recording games into the replay buffer, and training steps. </source>
        <translation>自我对弈推理（含网络输入输出的复制）、树搜索、将对局记录到回放缓冲区，以及训练步骤。</translation>
    </message>
    <message>
        <source>Weight of the exponential moving average drawn for every curve: 0 draws the raw values, 0.9 a smooth trend over the raw curve, which stays drawn faded. Exported data stays raw.</source>
        <translation>每条曲线所绘指数移动平均的权重：0 绘制原始值，0.9 在原始曲线上绘制平滑趋势，原始曲线仍以淡色绘出。导出的数据保持原始值。</translation>
    </message>
    <message>
        <source>Iteration</source>
        <translation>迭代</translation>
    </message>
    <message>
        <source>Training time</source>
        <translation>训练时间</translation>
    </message>
    <message>
        <source>Wall clock</source>
        <translation>挂钟时间</translation>
    </message>
    <message>
        <source>The horizontal axis: iterations; training time (the iterations&apos; durations added up, pauses left out); or the time of day each iteration ended.</source>
        <translation>横轴：迭代次数；训练时间（各次迭代时长之和，不含暂停）；或每次迭代结束时的时刻。</translation>
    </message>
    <message>
        <source>Logarithmic vertical axes (not the score&apos;s, which has zeros); points at or below zero are left out.</source>
        <translation>纵轴使用对数刻度（得分图除外，因为得分有零值）；小于或等于零的点不绘制。</translation>
    </message>
    <message>
        <source>Draw an earlier run&apos;s metrics (its run folder&apos;s metrics.jsonl) beside this run, in a colour of its own.</source>
        <translation>在本次运行旁以独立颜色绘制较早运行的指标（其运行文件夹中的 metrics.jsonl）。</translation>
    </message>
    <message>
        <source>&amp;X axis:</source>
        <translation>横轴(&amp;X)：</translation>
    </message>
    <message>
        <source>training time (h:mm:ss)</source>
        <translation>训练时间（时:分:秒）</translation>
    </message>
    <message>
        <source>time of day</source>
        <translation>时刻</translation>
    </message>
    <message>
        <source>%1 (raw)</source>
        <translation>%1（原始）</translation>
    </message>
    <message>
        <source>this run</source>
        <translation>本次运行</translation>
    </message>
    <message>
        <source>Not drawn against this axis, for want of recorded times: %1.</source>
        <translation>未记录时间，无法按此横轴绘制：%1。</translation>
    </message>
    <message>
        <source>%1 = %2</source>
        <translation>%1 = %2</translation>
    </message>
    <message>
        <source>iteration %1</source>
        <translation>第 %1 次迭代</translation>
    </message>
    <message>
        <source>training time %1:%2:%3</source>
        <translation>训练时间 %1:%2:%3</translation>
    </message>
    <message>
        <source>%1: %2 (raw %3)</source>
        <translation>%1：%2（原始 %3）</translation>
    </message>
    <message>
        <source>changed: %1 %2 → %3</source>
        <translation>参数更改：%1 %2 → %3</translation>
    </message>
    <message>
        <source>%1 changed: %2 %3 → %4</source>
        <translation>%1 参数更改：%2 %3 → %4</translation>
    </message>
    <message>
        <source>At most %1 runs can be overlaid; remove one first.</source>
        <translation>最多可叠加 %1 个运行；请先移除一个。</translation>
    </message>
    <message>
        <source>Remove All</source>
        <translation>全部移除</translation>
    </message>
    <message>
        <source>Remove one overlaid run, or all of them.</source>
        <translation>移除一个叠加的运行，或全部移除。</translation>
    </message>
    <message>
        <source>Follow the Data (double-click)</source>
        <translation>跟随数据（双击）</translation>
    </message>
    <message>
        <source>The curves are those of %1.</source>
        <translation>曲线来自 %1。</translation>
    </message>
    <message>
        <source>random</source>
        <comment>the random baseline</comment>
        <translation>随机玩家</translation>
    </message>
    <message>
        <source>perfect</source>
        <comment>the perfect player</comment>
        <translation>完美玩家</translation>
    </message>
    <message>
        <source>Episode return</source>
        <translation>回合回报</translation>
    </message>
    <message>
        <source>return</source>
        <translation>回报</translation>
    </message>
    <message>
        <source>The mean return of the episodes that ended in each iteration&apos;s rollout (sampled actions). </source>
        <translation>每轮采样中结束的回合的平均回报（按策略采样动作）。</translation>
    </message>
    <message>
        <source>Environment steps per second</source>
        <translation>每秒环境步数</translation>
    </message>
    <message>
        <source>steps/s</source>
        <translation>步/秒</translation>
    </message>
    <message>
        <source>Rollout and update together. </source>
        <translation>采样与更新合计。</translation>
    </message>
    <message>
        <source>Episode length</source>
        <translation>回合长度</translation>
    </message>
    <message>
        <source>steps</source>
        <translation>步</translation>
    </message>
    <message>
        <source>The mean length of the episodes that ended in each iteration&apos;s rollout. </source>
        <translation>每轮采样中结束的回合的平均长度。</translation>
    </message>
    <message>
        <source>The rollout (policy, sampling, environments) and the update. </source>
        <translation>采样（策略、动作抽样、环境）与更新。</translation>
    </message>
    <message>
        <source>mean return</source>
        <translation>平均回报</translation>
    </message>
    <message>
        <source>mean length</source>
        <translation>平均长度</translation>
    </message>
    <message>
        <source>environment steps/s</source>
        <translation>环境步/秒</translation>
    </message>
    <message>
        <source>rollout</source>
        <translation>采样</translation>
    </message>
    <message>
        <source>Iteration %1: %2 environment steps, %3 episodes finished.</source>
        <translation>第 %1 次迭代：%2 个环境步，已完成 %3 个回合。</translation>
    </message>
</context>
<context>
    <name>cas::widgets::MoveList</name>
    <message>
        <source>The starting position</source>
        <translation>初始局面</translation>
    </message>
    <message>
        <source>One move back (Up arrow in the list)</source>
        <translation>后退一步（在列表中按上箭头）</translation>
    </message>
    <message>
        <source>One move forward (Down arrow in the list)</source>
        <translation>前进一步（在列表中按下箭头）</translation>
    </message>
    <message>
        <source>The game&apos;s current position</source>
        <translation>对局的当前局面</translation>
    </message>
    <message>
        <source>Move</source>
        <translation>着法</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>价值</translation>
    </message>
    <message>
        <source>The agent&apos;s value of the position after the move, for the player who made it, from -1 (lost) to +1 (won); – where no search of the agent judged it. A finished game&apos;s last move shows the result.</source>
        <translation>智能体对该着法之后局面的估值，从走这步棋的一方来看，取值 -1（负）到 +1（胜）；智能体未搜索评估过的着法显示为 –。已结束对局的最后一步显示结果。</translation>
    </message>
    <message>
        <source>Pick a move to see the position after it; the game goes on from its last move.</source>
        <translation>选择一步着法以查看其后的局面；对局从最后一步继续。</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>开局</translation>
    </message>
    <message>
        <source>%1. %2 %3</source>
        <translation>%1. %2 %3</translation>
    </message>
    <message>
        <source>wins</source>
        <translation>胜</translation>
    </message>
    <message>
        <source>loses</source>
        <translation>负</translation>
    </message>
    <message>
        <source>draw</source>
        <translation>和局</translation>
    </message>
</context>
<context>
    <name>cas::widgets::NewProjectDialog</name>
    <message>
        <source>Choose a folder for the new project.</source>
        <translation>请为新项目选择一个文件夹。</translation>
    </message>
    <message>
        <source>%1 is a file, not a folder.</source>
        <translation>%1 是文件，不是文件夹。</translation>
    </message>
    <message>
        <source>%1 is not empty. A new project needs a new or an empty folder, so that none of its files are overwritten.</source>
        <translation>%1 不是空的。新项目需要一个新的或空的文件夹，以免覆盖其中的任何文件。</translation>
    </message>
    <message>
        <source>%1 could not be created.</source>
        <translation>无法创建 %1。</translation>
    </message>
    <message>
        <source>%1 could not be copied: %2</source>
        <translation>无法复制 %1：%2</translation>
    </message>
    <message>
        <source>The project made from %1 does not load; nothing was kept.</source>
        <translation>由 %1 创建的项目无法加载；未保留任何文件。</translation>
    </message>
    <message>
        <source>New Project</source>
        <translation>新建项目</translation>
    </message>
    <message>
        <source>a new or empty folder</source>
        <translation>新的或空的文件夹</translation>
    </message>
    <message>
        <source>Browse...</source>
        <translation>浏览...</translation>
    </message>
    <message>
        <source>Create</source>
        <translation>创建</translation>
    </message>
    <message>
        <source>Template:</source>
        <translation>模板：</translation>
    </message>
    <message>
        <source>Folder:</source>
        <translation>文件夹：</translation>
    </message>
    <message>
        <source>The new project starts as a copy of an example project, named after its folder.</source>
        <translation>新项目以一个示例项目的副本开始，并以其文件夹命名。</translation>
    </message>
    <message>
        <source>No example projects were found next to the studio or in its source tree.</source>
        <translation>在工作室旁边或其源代码树中找不到示例项目。</translation>
    </message>
    <message>
        <source>Folder for the New Project</source>
        <translation>新项目的文件夹</translation>
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
    <message>
        <source>Changed during a run, it applies at the next iteration; the change is logged with that iteration.</source>
        <translation>运行期间修改后，将在下一次迭代生效；该修改会随该次迭代记入日志。</translation>
    </message>
    <message>
        <source>Takes effect when a run starts; to change it, stop the run and start a new one.</source>
        <translation>在运行开始时生效；如需修改，请停止当前运行并开始新的运行。</translation>
    </message>
    <message>
        <source>on restart (fixed for this run)</source>
        <translation>重启后生效（本次运行中固定）</translation>
    </message>
    <message>
        <source>live: %1 requested, applies at the next iteration</source>
        <translation>实时生效：已请求 %1，将在下一次迭代生效</translation>
    </message>
    <message>
        <source>live: applied at iteration %1</source>
        <translation>实时生效：已在第 %1 次迭代生效</translation>
    </message>
    <message>
        <source>Bold: %1&apos;s value differs from project.toml, which has %2. Reset goes back to it; Write to project.toml keeps %3.</source>
        <translation>粗体：%1 的值与 project.toml 不同，后者为 %2。“重置”恢复为该值；“写入 project.toml”保留 %3。</translation>
    </message>
</context>
<context>
    <name>cas::widgets::PdlEditor</name>
    <message>
        <source>&amp;Save</source>
        <translation>保存(&amp;S)</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
    <message>
        <source>Undo the last edit (%1)</source>
        <translation>撤销上一次编辑（%1）</translation>
    </message>
    <message>
        <source>Redo</source>
        <translation>重做</translation>
    </message>
    <message>
        <source>Redo the edit undone last (%1)</source>
        <translation>重做上一次撤销的编辑（%1）</translation>
    </message>
    <message>
        <source>Line:Col</source>
        <translation>行:列</translation>
    </message>
    <message>
        <source>Problem</source>
        <translation>问题</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>%1 cannot be read: %2</source>
        <translation>无法读取 %1：%2</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>%1 was not saved: %2</source>
        <translation>未能保存 %1：%2</translation>
    </message>
    <message>
        <source>Unsaved changes</source>
        <translation>未保存的更改</translation>
    </message>
    <message>
        <source>%1 has changes that are not saved. Save them?</source>
        <translation>%1 有未保存的更改。是否保存？</translation>
    </message>
    <message>
        <source>No project: the policy is compiled for the project&apos;s environment.</source>
        <translation>没有项目：策略需针对项目的环境进行编译。</translation>
    </message>
    <message>
        <source>Not a PDL file: it is not compiled.</source>
        <translation>不是 PDL 文件：不会编译。</translation>
    </message>
    <message>
        <source>file</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>%1 (%2): output %3, %4 parameters, %5 FLOPs per sample</source>
        <translation>%1（%2）：输出 %3，%4 个参数，每个样本 %5 FLOPs</translation>
    </message>
    <message>
        <source>%1 p</source>
        <translation>%1 p</translation>
    </message>
    <message>
        <source>Errors: %1, warnings: %2</source>
        <translation>错误：%1，警告：%2</translation>
    </message>
    <message>
        <source>%1 layers · %2 parameters</source>
        <translation>%1 层 · %2 个参数</translation>
    </message>
    <message>
        <source>warnings: %1</source>
        <translation>警告：%1</translation>
    </message>
    <message>
        <source>Save the file in front (%1)</source>
        <translation>保存前台的文件（%1）</translation>
    </message>
    <message>
        <source>Save &amp;As...</source>
        <translation>另存为(&amp;A)...</translation>
    </message>
    <message>
        <source>Policy editor: complete the word at the cursor</source>
        <translation>策略编辑器：补全光标处的单词</translation>
    </message>
    <message>
        <source>%1 ●</source>
        <translation>%1 ●</translation>
    </message>
    <message>
        <source>%1 (modified)</source>
        <translation>%1（已修改）</translation>
    </message>
    <message>
        <source>Save As</source>
        <translation>另存为</translation>
    </message>
    <message>
        <source>%1 is open in another tab; close that tab first.</source>
        <translation>%1 已在另一个标签页中打开；请先关闭那个标签页。</translation>
    </message>
    <message>
        <source>PDL policies (*.pdl)</source>
        <translation>PDL 策略 (*.pdl)</translation>
    </message>
    <message>
        <source>TOML files (*.toml)</source>
        <translation>TOML 文件 (*.toml)</translation>
    </message>
    <message>
        <source>Open a project to edit its policy.</source>
        <translation>打开项目以编辑其策略。</translation>
    </message>
    <message>
        <source>The program does not compile; the layer hints show the last version that compiled.</source>
        <translation>程序无法编译；层提示显示的是最后一个成功编译的版本。</translation>
    </message>
    <message>
        <source>Outputs: %1. Compiled in %2 ms for batch 1. The hint after a line shows the output shapes and parameters (p) of the layers made on it.</source>
        <translation>输出：%1。以批大小 1 编译，用时 %2 ms。每行之后的提示显示该行所创建各层的输出形状和参数量（p）。</translation>
    </message>
</context>
<context>
    <name>cas::widgets::PdlReferenceDialog</name>
    <message>
        <source>PDL Reference</source>
        <translation>PDL 参考</translation>
    </message>
</context>
<context>
    <name>cas::widgets::PlayPanel</name>
    <message>
        <source>Load current run</source>
        <translation>加载当前运行</translation>
    </message>
    <message>
        <source>Open run…</source>
        <translation>打开运行…</translation>
    </message>
    <message>
        <source>Play</source>
        <translation>对弈</translation>
    </message>
    <message>
        <source>Set up</source>
        <translation>摆棋</translation>
    </message>
    <message>
        <source>New game</source>
        <translation>新对局</translation>
    </message>
    <message>
        <source>Clear</source>
        <translation>清空</translation>
    </message>
    <message>
        <source>Analyse</source>
        <translation>分析</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>悔棋</translation>
    </message>
    <message>
        <source>Show on board</source>
        <translation>在棋盘上显示</translation>
    </message>
    <message>
        <source>No run is loaded.</source>
        <translation>尚未加载运行。</translation>
    </message>
    <message>
        <source>Loads the newest checkpoint of the run trained in this window.</source>
        <translation>加载在此窗口中训练的运行的最新检查点。</translation>
    </message>
    <message>
        <source>Loads the newest checkpoint of a run folder.</source>
        <translation>加载某个运行文件夹中的最新检查点。</translation>
    </message>
    <message>
        <source>Play against the loaded run&apos;s agent.</source>
        <translation>与已加载运行的智能体对弈。</translation>
    </message>
    <message>
        <source>Place stones for both sides, then analyse the position.</source>
        <translation>为双方落子，然后分析该局面。</translation>
    </message>
    <message>
        <source>Simulations of the agent&apos;s search per move; the run&apos;s search.simulations when a run loads.</source>
        <translation>智能体每步搜索的模拟次数；加载运行时取该运行的 search.simulations。</translation>
    </message>
    <message>
        <source>You move first</source>
        <translation>你先手</translation>
    </message>
    <message>
        <source>The agent moves first</source>
        <translation>智能体先手</translation>
    </message>
    <message>
        <source>Searches the position on the board with the loaded run.</source>
        <translation>用已加载的运行搜索棋盘上的局面。</translation>
    </message>
    <message>
        <source>Draws the search&apos;s visit share, Q and prior on each move of the board.</source>
        <translation>在棋盘的每个着法上绘制搜索的访问占比、Q 和先验。</translation>
    </message>
    <message>
        <source>Simulations:</source>
        <translation>模拟次数：</translation>
    </message>
    <message>
        <source>Loading %1…</source>
        <translation>正在加载 %1…</translation>
    </message>
    <message>
        <source>Open Run</source>
        <translation>打开运行</translation>
    </message>
    <message>
        <source>The agent is thinking (simulations: %1)…</source>
        <translation>智能体正在思考（模拟次数：%1）…</translation>
    </message>
    <message>
        <source>Analysing (simulations: %1)…</source>
        <translation>正在分析（模拟次数：%1）…</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;Checkpoint of iteration %2</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;第 %2 次迭代的检查点</translation>
    </message>
    <message>
        <source>Skipped: %1</source>
        <translation>已跳过：%1</translation>
    </message>
    <message>
        <source>%1
Project %2 (%3), checkpoint %4</source>
        <translation>%1
项目 %2（%3），检查点 %4</translation>
    </message>
    <message>
        <source>%1 could not be loaded: %2</source>
        <translation>无法加载 %1：%2</translation>
    </message>
    <message>
        <source>The agent&apos;s search chose no legal move.</source>
        <translation>智能体的搜索未选出合法着法。</translation>
    </message>
    <message>
        <source>The search failed: %1</source>
        <translation>搜索失败：%1</translation>
    </message>
    <message>
        <source>The agent&apos;s search for move %1: it played %2, value %3.</source>
        <translation>智能体第 %1 步的搜索：走了 %2，价值 %3。</translation>
    </message>
    <message>
        <source>Search with %1 to move: best move %2, value %3.</source>
        <translation>轮到 %1 走棋时的搜索：最佳着法 %2，价值 %3。</translation>
    </message>
    <message>
        <source>–</source>
        <translation>–</translation>
    </message>
    <message>
        <source>Visits</source>
        <translation>访问次数</translation>
    </message>
    <message>
        <source>Q</source>
        <translation>Q</translation>
    </message>
    <message>
        <source>Prior</source>
        <translation>先验</translation>
    </message>
    <message>
        <source>Mean value of the move for the player making it, from -1 (lost) to +1 (won).</source>
        <translation>该着法对走棋一方的平均价值，从 -1（负）到 +1（胜）。</translation>
    </message>
    <message>
        <source>The network&apos;s probability for the move before the search.</source>
        <translation>搜索前网络给出的该着法概率。</translation>
    </message>
    <message>
        <source>The agent&apos;s search for its move appears here.</source>
        <translation>智能体为其着法进行的搜索将显示在这里。</translation>
    </message>
    <message>
        <source>Analyse shows the search of the position here.</source>
        <translation>“分析”会在这里显示该局面的搜索。</translation>
    </message>
    <message>
        <source>The board cannot show this position.</source>
        <translation>棋盘无法显示此局面。</translation>
    </message>
    <message>
        <source>Click a free cell.</source>
        <translation>请点击一个空格。</translation>
    </message>
    <message>
        <source>Click a column.</source>
        <translation>请点击一列。</translation>
    </message>
    <message>
        <source>Draw.</source>
        <translation>和棋。</translation>
    </message>
    <message>
        <source>%1 wins.</source>
        <translation>%1 获胜。</translation>
    </message>
    <message>
        <source>Set up a position: each click places a stone for the side to move (%1). Analyse searches it.</source>
        <translation>摆放局面：每次点击为轮到走棋的一方（%1）落子。“分析”会搜索该局面。</translation>
    </message>
    <message>
        <source>The loaded run plays %1, so it cannot analyse this %2 position.</source>
        <translation>已加载的运行下的是 %1，因此无法分析这个 %2 局面。</translation>
    </message>
    <message>
        <source>Training is in progress: Load current run plays its newest checkpoint.</source>
        <translation>训练正在进行：“加载当前运行”将使用其最新检查点对弈。</translation>
    </message>
    <message>
        <source>Train the project (Run ▸ Train) and play its agent here, or open a run folder.</source>
        <translation>训练项目（运行 ▸ 训练）后在这里与其智能体对弈，或打开一个运行文件夹。</translation>
    </message>
    <message>
        <source>The loaded run plays %1; New game starts one.</source>
        <translation>已加载的运行下的是 %1；点击“新对局”开始一局。</translation>
    </message>
    <message>
        <source>You win!</source>
        <translation>你赢了！</translation>
    </message>
    <message>
        <source>The agent wins.</source>
        <translation>智能体获胜。</translation>
    </message>
    <message>
        <source>New game starts another.</source>
        <translation>点击“新对局”再来一局。</translation>
    </message>
    <message>
        <source>Your move: you play %1. %2</source>
        <translation>轮到你走棋：你执 %1。%2</translation>
    </message>
    <message>
        <source>The agent is to move.</source>
        <translation>轮到智能体走棋。</translation>
    </message>
    <message>
        <source>win</source>
        <translation>胜局</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>负局</translation>
    </message>
    <message>
        <source>draw</source>
        <translation>和局</translation>
    </message>
    <message>
        <source>%1 or %2</source>
        <translation>%1 或 %2</translation>
    </message>
    <message>
        <source>The perfect player solves the position within %1 s: rings mark its best moves on the board, a red ring a move that made the result worse.</source>
        <translation>完美玩家在 %1 秒内求解局面：棋盘上的圆环标出最佳着法，红色圆环标出让结果变坏的着法。</translation>
    </message>
    <message>
        <source>Perfect play: %1 (%2).</source>
        <translation>完美着法：%1（%2）。</translation>
    </message>
    <message>
        <source>The perfect player could not solve every move within %1 s.</source>
        <translation>完美玩家未能在 %1 秒内求解所有着法。</translation>
    </message>
    <message>
        <source>The agent&apos;s move %1 is not judged: %2</source>
        <translation>智能体的着法 %1 未被评判：%2</translation>
    </message>
    <message>
        <source>Mistake:</source>
        <translation>失误：</translation>
    </message>
    <message>
        <source>the agent&apos;s move %1 turns a %2 into a %3.</source>
        <translation>智能体的着法 %1 把%2变成了%3。</translation>
    </message>
    <message>
        <source>The agent&apos;s move %1 loses, as every move does against perfect play.</source>
        <translation>智能体的着法 %1 会输，面对完美对手时每一步都会输。</translation>
    </message>
    <message>
        <source>The agent&apos;s move %1 is perfect: it keeps the %2.</source>
        <translation>智能体的着法 %1 是完美着法：它保持了%2。</translation>
    </message>
    <message>
        <source>unsolved</source>
        <translation>未求解</translation>
    </message>
    <message>
        <source>Perfect play</source>
        <translation>完美着法</translation>
    </message>
    <message>
        <source>What the move leads to for the player making it, against perfect play.</source>
        <translation>面对完美对手时，这一着法对走棋一方的结果。</translation>
    </message>
    <message>
        <source>Move %1 of %2 is shown. Step forward, or pick the last move, to go on from the game&apos;s position.</source>
        <translation>正在显示第 %1 步（共 %2 步）。前进或选择最后一步，即可从对局当前局面继续。</translation>
    </message>
    <message>
        <source>Load a run on the Board to search its position.</source>
        <translation>在“棋盘”中加载一个运行，才能搜索其局面。</translation>
    </message>
    <message>
        <source>The run loaded on the Board plays %1, not %2.</source>
        <translation>“棋盘”中加载的运行下的是 %1，而不是 %2。</translation>
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
            <numerusform>无法打开 %1：%n 个错误，详见日志。</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>cas::widgets::RunCatalog</name>
    <message>
        <source>%1 = %2 (project: %3)</source>
        <translation>%1 = %2（项目：%3）</translation>
    </message>
    <message>
        <source>%1 = %2 live from iteration %3</source>
        <translation>%1 = %2（自第 %3 次迭代起实时更改）</translation>
    </message>
    <message>
        <source>return %1</source>
        <translation>回报 %1</translation>
    </message>
</context>
<context>
    <name>cas::widgets::RunController</name>
    <message>
        <source>No run is active.</source>
        <translation>没有正在进行的运行。</translation>
    </message>
    <message>
        <source>The kernels could not be timed: %1</source>
        <translation>无法为内核计时：%1</translation>
    </message>
    <message>
        <source>%1 cannot be resumed: %2</source>
        <translation>%1 无法继续训练：%2</translation>
    </message>
    <message>
        <source>Skipped checkpoint %1</source>
        <translation>已跳过检查点 %1</translation>
    </message>
</context>
<context>
    <name>cas::widgets::RunsDock</name>
    <message>
        <source>Metrics</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>Shows the selected run&apos;s metrics in the Metrics dock. Tick the boxes beside the names to draw several runs dashed beside it.</source>
        <translation>在“指标”面板中显示所选运行的指标。勾选名称旁的复选框，可将多个运行以虚线与其并列绘制。</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续训练</translation>
    </message>
    <message>
        <source>Trains the selected run on from its newest valid checkpoint, with the project file and policy it was trained with.</source>
        <translation>从最新的有效检查点继续训练所选运行，使用训练它时的项目文件和策略。</translation>
    </message>
    <message>
        <source>Play</source>
        <translation>对弈</translation>
    </message>
    <message>
        <source>Loads the selected run on the Board to play against it.</source>
        <translation>在“棋盘”面板中加载所选运行，与其对弈。</translation>
    </message>
    <message>
        <source>Analyse</source>
        <translation>分析</translation>
    </message>
    <message>
        <source>Loads the selected run on the Board in Set up mode, to analyse positions with it.</source>
        <translation>在“棋盘”面板中以摆棋模式加载所选运行，用它分析局面。</translation>
    </message>
    <message>
        <source>Rename...</source>
        <translation>重命名...</translation>
    </message>
    <message>
        <source>Renames the selected run&apos;s folder.</source>
        <translation>重命名所选运行的文件夹。</translation>
    </message>
    <message>
        <source>Delete...</source>
        <translation>删除...</translation>
    </message>
    <message>
        <source>Deletes the selected run&apos;s folder (checkpoints, metrics, logs) after asking.</source>
        <translation>确认后删除所选运行的文件夹（检查点、指标、日志）。</translation>
    </message>
    <message>
        <source>Open Folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <source>Opens the selected run&apos;s folder in the file manager.</source>
        <translation>在文件管理器中打开所选运行的文件夹。</translation>
    </message>
    <message>
        <source>Add Run Folder...</source>
        <translation>添加运行文件夹...</translation>
    </message>
    <message>
        <source>Lists a run folder from elsewhere (such as one written by cuda-agent train --out).</source>
        <translation>列出其他位置的运行文件夹（例如由 cuda-agent train --out 写入的文件夹）。</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <source>Reads the run folders again.</source>
        <translation>重新读取运行文件夹。</translation>
    </message>
    <message>
        <source>No runs of this project yet. Run &gt; Train starts one; Add Run Folder... lists a run trained elsewhere.</source>
        <translation>此项目还没有运行。“运行 &gt; 训练”可开始一个运行；“添加运行文件夹...”可列出在其他地方训练的运行。</translation>
    </message>
    <message>
        <source>Rename Run</source>
        <translation>重命名运行</translation>
    </message>
    <message>
        <source>New name of the run folder:</source>
        <translation>运行文件夹的新名称：</translation>
    </message>
    <message>
        <source>%1 was not renamed: process %2 is training it now. Stop that run first.</source>
        <translation>%1 未重命名：进程 %2 正在训练它。请先停止该运行。</translation>
    </message>
    <message>
        <source>%1 was not renamed: &quot;%2&quot; is not a folder name; use letters, digits, &apos;-&apos; or &apos;_&apos;, without &apos;/&apos;.</source>
        <translation>%1 未重命名：“%2”不是有效的文件夹名；请使用字母、数字、“-”或“_”，不要包含“/”。</translation>
    </message>
    <message>
        <source>%1 was not renamed: %2 already exists; choose another name.</source>
        <translation>%1 未重命名：%2 已存在；请换一个名称。</translation>
    </message>
    <message>
        <source>%1 could not be renamed to %2; check that its parent folder is writable.</source>
        <translation>%1 无法重命名为 %2；请检查其上级文件夹是否可写。</translation>
    </message>
    <message>
        <source>Renamed the run %1 to %2.</source>
        <translation>已将运行 %1 重命名为 %2。</translation>
    </message>
    <message>
        <source>%1 was not deleted: process %2 is training it now. Stop that run first.</source>
        <translation>%1 未删除：进程 %2 正在训练它。请先停止该运行。</translation>
    </message>
    <message>
        <source>Delete Run</source>
        <translation>删除运行</translation>
    </message>
    <message>
        <source>Delete the run %1?

Its folder, with its checkpoints, metrics and logs, is removed from the disk; this cannot be undone.

%2</source>
        <translation>删除运行 %1？

其文件夹（包括检查点、指标和日志）将从磁盘上删除；此操作无法撤销。

%2</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>%1 could not be deleted completely; what is left is in that folder.</source>
        <translation>%1 未能完全删除；剩余内容仍在该文件夹中。</translation>
    </message>
    <message>
        <source>Deleted the run %1.</source>
        <translation>已删除运行 %1。</translation>
    </message>
    <message>
        <source>No file manager could open %1; open it by hand.</source>
        <translation>没有文件管理器能打开 %1；请手动打开。</translation>
    </message>
    <message>
        <source>Add Run Folder</source>
        <translation>添加运行文件夹</translation>
    </message>
    <message>
        <source>%1 was not added to the runs: %2</source>
        <translation>%1 未添加到运行列表：%2</translation>
    </message>
    <message>
        <source>Records an episode of the selected run in the Episode dock.</source>
        <translation>在“回合”停靠窗中录制所选运行的一个回合。</translation>
    </message>
    <message>
        <source>Analyse sets up positions on the Board: for board-game runs only.</source>
        <translation>分析在棋盘上摆设局面：仅适用于棋盘游戏的运行。</translation>
    </message>
</context>
<context>
    <name>cas::widgets::RunsModel</name>
    <message>
        <source>%1
Tick the box to draw this run&apos;s metrics in the Metrics dock beside the current run.</source>
        <translation>%1
勾选此框可在“指标”面板中将此运行的指标与当前运行并列绘制。</translation>
    </message>
    <message>
        <source>Trained with the project&apos;s current values.</source>
        <translation>使用项目当前的值训练。</translation>
    </message>
    <message>
        <source>How this run&apos;s configuration differs from the open project:
%1</source>
        <translation>此运行的配置与打开的项目的不同之处：
%1</translation>
    </message>
    <message>
        <source>Process %1 is training this run now.</source>
        <translation>进程 %1 正在训练此运行。</translation>
    </message>
    <message>
        <source>Not running; it can be resumed from its newest checkpoint.</source>
        <translation>未在运行；可从其最新检查点继续训练。</translation>
    </message>
    <message>
        <source>Not running, and it has no checkpoint to resume from.</source>
        <translation>未在运行，且没有可用于继续训练的检查点。</translation>
    </message>
    <message>
        <source>Process %1, which trained this run, ended without stopping it (killed or crashed). Resume continues from the newest valid checkpoint.</source>
        <translation>训练此运行的进程 %1 未正常停止就结束了（被终止或崩溃）。“继续训练”将从最新的有效检查点开始。</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message numerus="yes">
        <source>%n more</source>
        <translation>
            <numerusform>另有 %n 项</numerusform>
        </translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>crashed</source>
        <translation>已崩溃</translation>
    </message>
    <message>
        <source>unreadable</source>
        <translation>无法读取</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Started</source>
        <translation>开始时间</translation>
    </message>
    <message>
        <source>Iterations</source>
        <translation>迭代次数</translation>
    </message>
    <message>
        <source>Last score</source>
        <translation>最近得分</translation>
    </message>
    <message>
        <source>Differs from project</source>
        <translation>与项目的差异</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
</context>
<context>
    <name>cas::widgets::SearchTreePanel</name>
    <message>
        <source>Teaching mode</source>
        <translation>教学模式</translation>
    </message>
    <message>
        <source>Step one simulation</source>
        <translation>单步执行一次模拟</translation>
    </message>
    <message>
        <source>Sunburst</source>
        <translation>旭日图</translation>
    </message>
    <message>
        <source>Rings by depth; a node&apos;s angle is its share of the visits</source>
        <translation>按深度分环；节点所占角度即其访问次数占比</translation>
    </message>
    <message>
        <source>Node-link</source>
        <translation>节点链接图</translation>
    </message>
    <message>
        <source>The top levels as a tree of nodes and edges</source>
        <translation>以节点和边组成的树显示顶部若干层</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>适应窗口</translation>
    </message>
    <message>
        <source>Show the whole tree (or double-click the view)</source>
        <translation>显示整棵树（或双击视图）</translation>
    </message>
    <message>
        <source>Debug</source>
        <translation>调试</translation>
    </message>
    <message>
        <source>Debug overlay: frame time, snapshot latency, tree size, allocator and queues (F12)</source>
        <translation>调试浮层：帧时间、快照延迟、树大小、分配器和队列（F12）</translation>
    </message>
    <message>
        <source>Step through single simulations of the paused run and watch selection, expansion and backup</source>
        <translation>逐次单步执行已暂停运行的模拟，观察选择、扩展和回传</translation>
    </message>
    <message>
        <source>Start a run, then pause it to step.</source>
        <translation>请先开始运行，再暂停以单步执行。</translation>
    </message>
    <message>
        <source>Pause the run (Run ▸ Pause) to step through single simulations.</source>
        <translation>暂停运行（运行 ▸ 暂停）即可逐次单步执行模拟。</translation>
    </message>
    <message>
        <source>Each step animates selection, expansion and backup.</source>
        <translation>每一步都以动画展示选择、扩展和回传。</translation>
    </message>
    <message>
        <source>No run.</source>
        <translation>没有运行。</translation>
    </message>
    <message>
        <source> · principal variation %1</source>
        <translation> · 主变 %1</translation>
    </message>
    <message>
        <source>The search tree is drawn with OpenGL, which Qt&apos;s &quot;%1&quot; platform cannot show in a window.</source>
        <translation>搜索树使用 OpenGL 绘制，而 Qt 的“%1”平台无法在窗口中显示它。</translation>
    </message>
    <message>
        <source>The search tree is drawn with OpenGL, but no OpenGL context can be created on this display.</source>
        <translation>搜索树使用 OpenGL 绘制，但无法在此显示器上创建 OpenGL 上下文。</translation>
    </message>
    <message>
        <source>Follow</source>
        <translation>跟随</translation>
    </message>
    <message>
        <source>One more simulation in every self-play game; the view animates the game chosen</source>
        <translation>在每局自对弈中再执行一次模拟；视图以动画展示所选对局的模拟</translation>
    </message>
    <message>
        <source>Game </source>
        <translation>对局 </translation>
    </message>
    <message>
        <source>Show each new tree while training; off, the tree holds still until Refresh</source>
        <translation>训练时显示每棵新树；关闭时树保持不动，直到点击“刷新”</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <source>Show the game&apos;s newest tree once</source>
        <translation>显示该局最新的搜索树一次</translation>
    </message>
    <message>
        <source>Train the project to watch the search tree of a self-play game grow.</source>
        <translation>训练项目即可观察自对弈对局的搜索树生长。</translation>
    </message>
    <message>
        <source>Waiting for the first snapshot of self-play game %1…</source>
        <translation>正在等待自对弈第 %1 局的第一个快照…</translation>
    </message>
    <message>
        <source>Self-play game %1: waiting for a snapshot.</source>
        <translation>自对弈第 %1 局：正在等待快照。</translation>
    </message>
    <message>
        <source>Search tree: show or hide the debug overlay</source>
        <translation>搜索树：显示或隐藏调试叠加层</translation>
    </message>
    <message>
        <source>Board position</source>
        <translation>棋盘局面</translation>
    </message>
    <message>
        <source>The self-play game whose tree is shown and, in teaching mode, stepped; or, below game 1, the position the Board shows, searched by the Board&apos;s agent</source>
        <translation>显示其搜索树的自对弈对局（教学模式下也单步执行该局）；或在第 1 局之下选择“棋盘局面”：“棋盘”所示的局面，由“棋盘”的智能体搜索</translation>
    </message>
    <message>
        <source>Searching the Board&apos;s position…</source>
        <translation>正在搜索“棋盘”的局面…</translation>
    </message>
    <message>
        <source>Board position: waiting for its search tree.</source>
        <translation>棋盘局面：正在等待其搜索树。</translation>
    </message>
    <message numerus="yes">
        <source>Board position after %n move(s), checkpoint of iteration %1</source>
        <translation>
            <numerusform>走了 %n 步后的棋盘局面，第 %1 次迭代的检查点</numerusform>
        </translation>
    </message>
    <message>
        <source>Self-play game %1, iteration %2</source>
        <translation>自对弈第 %1 局，第 %2 次迭代</translation>
    </message>
    <message>
        <source>%1 · the top levels: %2 nodes drawn of %3 in the tree · root N %4</source>
        <translation>%1 · 顶部几层：绘制了 %2 个节点（树中共 %3 个） · 根节点 N %4</translation>
    </message>
    <message>
        <source>%1 · %2 nodes shown of %3 in the tree · root N %4</source>
        <translation>%1 · 显示 %2 个节点（树中共 %3 个） · 根节点 N %4</translation>
    </message>
    <message>
        <source>This run&apos;s algorithm has no search tree (PPO): the Metrics and Episode docks show its training.</source>
        <translation>该运行的算法没有搜索树（PPO）：它的训练请看“指标”和“回合”面板。</translation>
    </message>
    <message>
        <source>How the tree reaches the screen: written by the GPU into the view&apos;s OpenGL buffers (CUDA-GL interop), or meshed on the CPU from a snapshot copied to host memory</source>
        <translation>树如何显示到屏幕上：由 GPU 直接写入视图的 OpenGL 缓冲区（CUDA-GL 互操作），或由 CPU 根据复制到主机内存的快照生成网格</translation>
    </message>
    <message>
        <source>Search tree: show the game&apos;s newest tree once (Refresh)</source>
        <translation>搜索树：显示该对局最新的树一次（刷新）</translation>
    </message>
    <message>
        <source>This project trains with PPO, which searches no tree: the Metrics and Episode docks show its training.</source>
        <translation>此项目使用 PPO 训练，不进行树搜索：“指标”和“回合”停靠窗显示其训练。</translation>
    </message>
    <message>
        <source>The tree view does not show MuZero&apos;s search over its learned model yet: the Metrics and Episode docks show its training.</source>
        <translation>树视图尚未显示 MuZero 在其学习模型上的搜索：“指标”和“回合”停靠窗显示其训练。</translation>
    </message>
</context>
<context>
    <name>cas::widgets::SearchTreeView</name>
    <message>
        <source>&lt;b&gt;Root&lt;/b&gt; — the position the search starts from</source>
        <translation>&lt;b&gt;根节点&lt;/b&gt; — 搜索开始的局面</translation>
    </message>
    <message>
        <source> (parent: %1)</source>
        <translation> （父节点：%1）</translation>
    </message>
    <message>
        <source>Q = %1 for the player who made the move</source>
        <translation>Q = %1（对走出该着法的一方而言）</translation>
    </message>
    <message>
        <source>Q: not visited yet</source>
        <translation>Q：尚未访问</translation>
    </message>
    <message>
        <source>P = %1 (the network&apos;s prior)</source>
        <translation>P = %1（网络给出的先验）</translation>
    </message>
    <message>
        <source>U = c·P·√N&lt;sub&gt;parent&lt;/sub&gt;/(1+N) = %1 × %2 × √%3 / %4 = %5</source>
        <translation>U = c·P·√N&lt;sub&gt;父&lt;/sub&gt;/(1+N) = %1 × %2 × √%3 / %4 = %5</translation>
    </message>
    <message>
        <source>Q + U = %1 (the search picks the child with the highest)</source>
        <translation>Q + U = %1（搜索选择该值最高的子节点）</translation>
    </message>
    <message>
        <source>Virtual loss: %1</source>
        <translation>虚拟损失：%1</translation>
    </message>
    <message>
        <source>On the principal variation (the most visited path)</source>
        <translation>位于主变上（访问次数最多的路径）</translation>
    </message>
    <message>
        <source>&lt;i&gt;Click to show this position on the board.&lt;/i&gt;</source>
        <translation>&lt;i&gt;点击以在棋盘上显示此局面。&lt;/i&gt;</translation>
    </message>
    <message>
        <source>N %1</source>
        <translation>N %1</translation>
    </message>
    <message>
        <source>Q for the player who made the move</source>
        <translation>走出该着法一方的 Q</translation>
    </message>
    <message>
        <source>Principal variation (most visits)</source>
        <translation>主变（访问次数最多）</translation>
    </message>
    <message>
        <source>−1 loses</source>
        <translation>−1 负</translation>
    </message>
    <message>
        <source>+1 wins</source>
        <translation>+1 胜</translation>
    </message>
    <message>
        <source>Root position</source>
        <translation>根局面</translation>
    </message>
    <message>
        <source>root</source>
        <translation>根节点</translation>
    </message>
    <message>
        <source>1 · Selection</source>
        <translation>1 · 选择</translation>
    </message>
    <message>
        <source>From the root the search follows, at each node, the child with the highest Q + U.</source>
        <translation>搜索从根节点出发，在每个节点沿 Q + U 最高的子节点向下。</translation>
    </message>
    <message>
        <source>Root: N %1</source>
        <translation>根节点：N %1</translation>
    </message>
    <message>
        <source>Move %1: Q %2 + U %3 = %4, the best of %5 children</source>
        <translation>着法 %1：Q %2 + U %3 = %4，为 %5 个子节点中的最高值</translation>
    </message>
    <message>
        <source>2 · Expansion</source>
        <translation>2 · 扩展</translation>
    </message>
    <message>
        <source>The leaf (move %1) ends the game or was expanded before: its value comes without new children.</source>
        <translation>叶节点（着法 %1）已终局或此前已扩展：直接得到其价值，不添加新的子节点。</translation>
    </message>
    <message>
        <source>The network evaluates the leaf (move %1) and adds its %2 children, each with its prior P.</source>
        <translation>网络评估叶节点（着法 %1），并添加其 %2 个子节点，每个子节点带有各自的先验 P。</translation>
    </message>
    <message>
        <source>Value for the player who moved into the leaf: %1</source>
        <translation>对走到该叶节点的一方的价值：%1</translation>
    </message>
    <message>
        <source>3 · Backup</source>
        <translation>3 · 回传</translation>
    </message>
    <message>
        <source>The value climbs back to the root: each node on the path gains a visit and its Q moves toward the value, whose sign flips at every level as the players alternate.</source>
        <translation>价值沿路径回传至根节点：路径上每个节点的访问次数加一，其 Q 向该价值靠拢；由于双方轮流走棋，价值的符号在每一层翻转。</translation>
    </message>
    <message>
        <source>Move %1</source>
        <translation>着法 %1</translation>
    </message>
    <message>
        <source>Root</source>
        <translation>根节点</translation>
    </message>
    <message>
        <source>%1: N %2 → %3, Q %4 → %5</source>
        <translation>%1：N %2 → %3，Q %4 → %5</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>none yet</source>
        <translation>暂无</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 ms</translation>
    </message>
    <message>
        <source>Frame</source>
        <translation>帧</translation>
    </message>
    <message>
        <source>Frame time</source>
        <translation>帧时间</translation>
    </message>
    <message>
        <source>Drawn</source>
        <translation>已绘制</translation>
    </message>
    <message>
        <source>%1 indices</source>
        <translation>%1 个索引</translation>
    </message>
    <message>
        <source>OpenGL</source>
        <translation>OpenGL</translation>
    </message>
    <message>
        <source>Snapshots</source>
        <translation>快照</translation>
    </message>
    <message>
        <source>Latency</source>
        <translation>延迟</translation>
    </message>
    <message>
        <source>Received</source>
        <translation>已接收</translation>
    </message>
    <message>
        <source>Queues</source>
        <translation>队列</translation>
    </message>
    <message>
        <source>Snapshot requests in flight</source>
        <translation>进行中的快照请求</translation>
    </message>
    <message>
        <source>Snapshots waiting for the worker</source>
        <translation>等待工作线程处理的快照</translation>
    </message>
    <message>
        <source>Tree</source>
        <translation>树</translation>
    </message>
    <message>
        <source>Sunburst mesh</source>
        <translation>旭日图网格</translation>
    </message>
    <message>
        <source>%1 vertices, %2 indices</source>
        <translation>%1 个顶点，%2 个索引</translation>
    </message>
    <message>
        <source>&lt;b&gt;Move %1&lt;/b&gt; at depth %2 (moves from the root: %3)</source>
        <translation>&lt;b&gt;着法 %1&lt;/b&gt;，深度 %2（自根节点起的着法：%3）</translation>
    </message>
    <message>
        <source>&lt;b&gt;Move %1&lt;/b&gt; from the root</source>
        <translation>&lt;b&gt;着法 %1&lt;/b&gt;，从根节点走出</translation>
    </message>
    <message>
        <source>%1 mean, %2 worst (%3 frames/s)</source>
        <translation>平均 %1，最差 %2（每秒 %3 帧）</translation>
    </message>
    <message>
        <source>%1 indices, level of detail %2 of %3</source>
        <translation>%1 个索引，细节层次 %2 / %3</translation>
    </message>
    <message>
        <source>Renderer</source>
        <translation>渲染器</translation>
    </message>
    <message>
        <source>%1 last, %2 mean (request to arrival)</source>
        <translation>最近 %1，平均 %2（从请求到送达）</translation>
    </message>
    <message>
        <source>%1, %2 superseded before drawing</source>
        <translation>%1 个，其中 %2 个在绘制前已被取代</translation>
    </message>
    <message>
        <source>Preparation</source>
        <translation>准备</translation>
    </message>
    <message>
        <source>%1 layout and meshes, %2 upload</source>
        <translation>布局与网格 %1，上传 %2</translation>
    </message>
    <message>
        <source>Snapshot</source>
        <translation>快照</translation>
    </message>
    <message>
        <source>%1 nodes, depth %2, root N %3, iteration %4</source>
        <translation>%1 个节点，深度 %2，根节点 N %3，第 %4 次迭代</translation>
    </message>
    <message>
        <source>Allocator</source>
        <translation>分配器</translation>
    </message>
    <message>
        <source>%1 of %2 nodes in use (%3%)</source>
        <translation>已使用 %1 / %2 个节点（%3%）</translation>
    </message>
    <message>
        <source>%1 nodes in use</source>
        <translation>已使用 %1 个节点</translation>
    </message>
    <message>
        <source>Recycled</source>
        <translation>已回收</translation>
    </message>
    <message>
        <source>%1 nodes so far</source>
        <translation>迄今共 %1 个节点</translation>
    </message>
    <message numerus="yes">
        <source>N = %Ln visit(s)</source>
        <translation>
            <numerusform>N = %Ln 次访问</numerusform>
        </translation>
    </message>
    <message>
        <source>the device had already laid out a newer tree</source>
        <translation>设备已布局了更新的树</translation>
    </message>
    <message>
        <source>CUDA could not write the OpenGL buffers (%1)</source>
        <translation>CUDA 无法写入 OpenGL 缓冲区（%1）</translation>
    </message>
    <message>
        <source>Path</source>
        <translation>路径</translation>
    </message>
    <message>
        <source>Device layout</source>
        <translation>设备布局</translation>
    </message>
    <message>
        <source>%1 on the engine thread, for the snapshot</source>
        <translation>引擎线程上 %1，用于该快照</translation>
    </message>
    <message>
        <source>Mapped buffers</source>
        <translation>映射的缓冲区</translation>
    </message>
    <message>
        <source>%1 map and unmap, %2 the kernel writing them (per snapshot; frames between reuse them)</source>
        <translation>映射与取消映射 %1，内核写入 %2（每个快照一次；其间的帧复用它们）</translation>
    </message>
    <message>
        <source>Superseded layouts</source>
        <translation>被取代的布局</translation>
    </message>
    <message>
        <source>%1 drawn from the host instead</source>
        <translation>%1 次改为从主机绘制</translation>
    </message>
    <message>
        <source>Drawing path</source>
        <translation>绘制路径</translation>
    </message>
    <message>
        <source>Instrumentation</source>
        <translation>插桩</translation>
    </message>
    <message>
        <source>Last kernel profile</source>
        <translation>最近一次内核分析</translation>
    </message>
    <message>
        <source>none yet (the Kernels dock&apos;s Measure or Live)</source>
        <translation>尚无（使用内核面板的“测量”或“实时”）</translation>
    </message>
    <message numerus="yes">
        <source>%1 on the engine thread, of which %2 for %n instrumented search step(s)</source>
        <translation>
            <numerusform>引擎线程上 %1，其中 %2 用于 %n 个插桩的搜索步骤</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 on the engine thread (no device search to instrument)</source>
        <translation>引擎线程上 %1（没有可插桩的设备搜索）</translation>
    </message>
    <message>
        <source>the OpenGL context (%1) does not run on the CUDA device that holds the tree</source>
        <translation>OpenGL 上下文（%1）不在保存该树的 CUDA 设备上运行</translation>
    </message>
    <message>
        <source>unknown renderer</source>
        <translation>未知渲染器</translation>
    </message>
    <message>
        <source>Drawn from device memory through CUDA-GL interop: %1 nodes written by the GPU.</source>
        <translation>通过 CUDA-GL 互操作从设备内存绘制：%1 个节点由 GPU 写入。</translation>
    </message>
    <message>
        <source>Drawn from a host snapshot: %1.</source>
        <translation>从主机快照绘制：%1。</translation>
    </message>
    <message>
        <source>the search keeps its trees in host memory</source>
        <translation>搜索将其树保存在主机内存中</translation>
    </message>
    <message>
        <source>the device could not lay the tree out (%1)</source>
        <translation>设备无法布局该树（%1）</translation>
    </message>
</context>
<context>
    <name>cas::widgets::ShortcutsDialog</name>
    <message>
        <source>Keyboard Shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>按键</translation>
    </message>
    <message>
        <source>Command</source>
        <translation>命令</translation>
    </message>
</context>
<context>
    <name>cas::widgets::SmTimeline</name>
    <message>
        <source>Each row is an SM, each bar a block of an instrumented kernel, placed at the time the SM ran it; the kernels of one simulation step follow each other from left to right.</source>
        <translation>每一行是一个 SM，每一条是插桩内核的一个线程块，位于该 SM 运行它的时刻；一个模拟步的各内核从左到右依次排列。</translation>
    </message>
    <message numerus="yes">
        <source>SM timeline of one simulation step: %n kernel(s), %1 blocks on %2 SMs over %3 µs</source>
        <translation>
            <numerusform>一个模拟步的 SM 时间线：%n 个内核，%1 个线程块，分布在 %2 个 SM 上，共 %3 µs</numerusform>
        </translation>
    </message>
    <message>
        <source>SM 0</source>
        <translation>SM 0</translation>
    </message>
    <message>
        <source>SM %1</source>
        <translation>SM %1</translation>
    </message>
    <message>
        <source>0 µs</source>
        <translation>0 µs</translation>
    </message>
    <message>
        <source>%1 µs</source>
        <translation>%1 µs</translation>
    </message>
</context>
<context>
    <name>cas::widgets::StageTimeModel</name>
    <message>
        <source>The network&apos;s forward passes during self-play, copies of its inputs and outputs included.</source>
        <translation>自对弈期间网络的前向传播，含其输入和输出的拷贝。</translation>
    </message>
    <message>
        <source>Tree search during self-play, inference left out.</source>
        <translation>自对弈期间的树搜索，不含推理。</translation>
    </message>
    <message>
        <source>Recording self-play positions and writing finished games to the replay buffer.</source>
        <translation>记录自对弈局面，并将已完成的对局写入回放缓冲区。</translation>
    </message>
    <message>
        <source>Training steps on replay-buffer samples.</source>
        <translation>基于回放缓冲区样本的训练步。</translation>
    </message>
    <message>
        <source>Iteration</source>
        <translation>迭代</translation>
    </message>
    <message>
        <source>Inference (s)</source>
        <translation>推理（秒）</translation>
    </message>
    <message>
        <source>Tree search (s)</source>
        <translation>树搜索（秒）</translation>
    </message>
    <message>
        <source>Game records (s)</source>
        <translation>对局记录（秒）</translation>
    </message>
    <message>
        <source>Training (s)</source>
        <translation>训练（秒）</translation>
    </message>
    <message>
        <source>Total (s)</source>
        <translation>总计（秒）</translation>
    </message>
</context>
<context>
    <name>cas::widgets::TradingChart</name>
    <message>
        <source>close %1</source>
        <translation>收盘价 %1</translation>
    </message>
    <message>
        <source>long</source>
        <translation>多头</translation>
    </message>
    <message>
        <source>short, out of the market</source>
        <translation>空头，未持仓</translation>
    </message>
    <message>
        <source>▲ buy</source>
        <translation>▲ 买入</translation>
    </message>
    <message>
        <source>▼ sell</source>
        <translation>▼ 卖出</translation>
    </message>
    <message>
        <source>equity %1</source>
        <translation>权益 %1</translation>
    </message>
    <message>
        <source>total profit %1</source>
        <translation>总利润 %1</translation>
    </message>
    <message>
        <source>buy and hold %1</source>
        <translation>买入持有 %1</translation>
    </message>
</context>
<context>
    <name>cas::widgets::TrainPrompt</name>
    <message>
        <source>Train</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>%1 has changes that are not saved, and a run trains the file on disk.</source>
        <translation>%1 有未保存的更改，而运行训练的是磁盘上的文件。</translation>
    </message>
    <message>
        <source>The changes do not compile (line %1: %2): fix them to train them, or train the saved file.</source>
        <translation>这些更改无法编译（第 %1 行：%2）：修正后才能训练它们，或者训练已保存的文件。</translation>
    </message>
    <message>
        <source>Save and Train</source>
        <translation>保存并训练</translation>
    </message>
    <message>
        <source>Train the Saved File</source>
        <translation>训练已保存的文件</translation>
    </message>
</context>
<context>
    <name>cas::widgets::TreeRenderer</name>
    <message>
        <source>The search tree needs OpenGL 3.3 or OpenGL ES 3.0; this context is %1.</source>
        <translation>搜索树需要 OpenGL 3.3 或 OpenGL ES 3.0；当前上下文为 %1。</translation>
    </message>
    <message>
        <source>The search tree&apos;s shader did not compile: %1</source>
        <translation>搜索树的着色器编译失败：%1</translation>
    </message>
    <message>
        <source>The search tree&apos;s shader did not link: %1</source>
        <translation>搜索树的着色器链接失败：%1</translation>
    </message>
</context>
<context>
    <name>cas::widgets::TuningPanel</name>
    <message>
        <source>Reset</source>
        <translation>重置</translation>
    </message>
    <message>
        <source>Write to project.toml</source>
        <translation>写入 project.toml</translation>
    </message>
    <message>
        <source>Sets the selected bold values back to project.toml&apos;s. During a run a live parameter changes at the next iteration; one fixed for the run keeps its value until the run ends.</source>
        <translation>将所选的粗体值恢复为 project.toml 中的值。运行期间，实时参数在下一次迭代时更改；在运行中固定的参数保持其值，直到运行结束。</translation>
    </message>
    <message>
        <source>Writes the selected bold values into project.toml, so the next run starts with them.</source>
        <translation>将所选的粗体值写入 project.toml，下一次运行将以这些值开始。</translation>
    </message>
    <message>
        <source>Changes in this run:</source>
        <translation>本次运行中的修改：</translation>
    </message>
    <message>
        <source>Values from project.toml; a run starts with them. During a run, double-click a live parameter&apos;s value to change it; it applies at the next iteration.</source>
        <translation>值来自 project.toml；运行以这些值开始。运行期间，双击实时参数的值可以更改它；更改在下一次迭代时生效。</translation>
    </message>
    <message>
        <source>Values of the run %1, the same as project.toml&apos;s. During a run, double-click a live parameter&apos;s value to change it; it applies at the next iteration.</source>
        <translation>运行 %1 的值，与 project.toml 中的相同。运行期间，双击实时参数的值可以更改它；更改在下一次迭代时生效。</translation>
    </message>
    <message numerus="yes">
        <source>Values of the run %1. &lt;b&gt;Bold&lt;/b&gt;: differs from project.toml (%n value(s)); select them to Reset them or to Write them to project.toml. The next run starts from project.toml.</source>
        <translation>
            <numerusform>运行 %1 的值。&lt;b&gt;粗体&lt;/b&gt;：与 project.toml 不同（%n 个值）；选中它们后可“重置”或“写入 project.toml”。下一次运行从 project.toml 开始。</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 is fixed for the running run; it goes back to project.toml&apos;s value when the next run starts.</source>
        <translation>%1 在当前运行中是固定的；下一次运行开始时将恢复为 project.toml 中的值。</translation>
    </message>
    <message>
        <source>%1 was not written: the Policy editor holds unsaved changes to it. Save or undo them, then write again.</source>
        <translation>%1 未写入：策略编辑器中有对它的未保存更改。请先保存或撤销这些更改，然后再写入。</translation>
    </message>
    <message>
        <source>%1 was not written: %2</source>
        <translation>%1 未写入：%2</translation>
    </message>
    <message>
        <source>Wrote %1 to %2.</source>
        <translation>已将 %1 写入 %2。</translation>
    </message>
    <message>
        <source>%1 = %2 (was %3), applied at iteration %4</source>
        <translation>%1 = %2（原为 %3），自第 %4 次迭代生效</translation>
    </message>
</context>
</TS>
