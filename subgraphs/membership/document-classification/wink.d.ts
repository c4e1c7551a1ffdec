// wink-naive-bayes-text-classifier and wink-nlp-utils ship no types: the parts used here.
declare module 'wink-naive-bayes-text-classifier' {
  export interface NaiveBayesTextClassifier {
    definePrepTasks(tasks: ((input: any) => any)[]): number;
    defineConfig(config: { considerOnlyPresence?: boolean; smoothingFactor?: number }): boolean;
    learn(input: string, label: string): boolean;
    consolidate(): boolean;
    predict(input: string): string;
    computeOdds(input: string): [string, number][];
    exportJSON(): string;
    importJSON(json: string): boolean;
    stats(): { labelWiseSamples: Record<string, number>; labelWiseWords: Record<string, number>; vocabulary: number };
  }
  function naiveBayesTextClassifier(): NaiveBayesTextClassifier;
  export default naiveBayesTextClassifier;
}

declare module 'wink-nlp-utils' {
  const utils: {
    string: { lowerCase(text: string): string; tokenize0(text: string): string[] };
    tokens: { removeWords(tokens: string[]): string[]; stem(tokens: string[]): string[] };
  };
  export default utils;
}
